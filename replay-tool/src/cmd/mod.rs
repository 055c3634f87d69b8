//! One module per subcommand (except `simulate`, which lives in [`crate::simulate`]).

pub mod compact;
pub mod dump;
pub mod follow;
pub mod plan;
pub mod sessions;
pub mod shell_docs;
pub mod state;
pub mod verify;
pub mod why;
