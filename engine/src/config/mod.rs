//! Layered configuration (in progress)
