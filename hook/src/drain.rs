//! (in progress)
pub fn run(_args: &[String]) -> anyhow::Result<i32> {
    anyhow::bail!("not built yet")
}
