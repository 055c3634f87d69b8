//! `ovhook install` / `ovhook uninstall` (in progress).
pub fn run(_args: &[String]) -> anyhow::Result<i32> {
    anyhow::bail!("install: not built yet")
}
/// `ovhook uninstall`.
pub fn run_uninstall(_args: &[String]) -> anyhow::Result<i32> {
    anyhow::bail!("uninstall: not built yet")
}
