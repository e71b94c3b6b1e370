//! Waiting in tests: on the state that proves a step happened, never on a fixed sleep or a speed.
//! Every wait shares one generous deadline, scaled by the factor `COWORK_TEST_PATIENCE` (default
//! one) for machines that are slower or busier than usual; a wait that runs out says what it
//! awaited and what it saw last. Speeds belong to the benches.

use std::future::Future;
use std::time::{Duration, Instant};

/// How long any single wait in a test may take before it fails.
pub fn patience() -> Duration {
    let factor = std::env::var("COWORK_TEST_PATIENCE")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|f| f.is_finite() && *f > 0.0)
        .unwrap_or(1.0);
    Duration::from_secs(60).mul_f64(factor)
}

/// Polls `probe` until it gives `Ok`, within [`patience`]. `Err` carries what was seen, which
/// the failure message quotes.
pub async fn until<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let limit = patience();
    let start = Instant::now();
    loop {
        match probe().await {
            Ok(found) => return found,
            Err(seen) if start.elapsed() > limit => {
                panic!("waited {limit:?} for {what}; last seen: {seen}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// [`until`] for a check that needs no `await`.
pub async fn until_true(what: &str, mut check: impl FnMut() -> Result<(), String>) {
    until(what, || std::future::ready(check())).await
}
