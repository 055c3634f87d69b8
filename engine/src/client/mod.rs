//! OpenViking HTTP client (in progress)
