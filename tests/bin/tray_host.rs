//! A desktop panel's tray host on a session bus, for the scripts that start Cowork hidden in the
//! tray (tests/bench-window.sh, tests/deb-install.sh): without one, a `--hidden` start shows its
//! window (hidden, it would be nowhere), so its idle memory could not be measured.
//!
//! `tray-host <bus address>` takes the watcher's name, prints `ready`, then `icon` once an app
//! registers one, and runs until it is killed.

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let address = std::env::args()
        .nth(1)
        .expect("usage: tray-host <session bus address, e.g. unix:path=/tmp/bus>");
    let host = cowork_tests::desktop::TrayHost::on(&address).await;
    println!("ready");
    if !host.menu().await.is_empty() {
        println!("icon");
    }
    std::future::pending::<()>().await;
}
