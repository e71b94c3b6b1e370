//! The full replay of both prompt-injection benchmarks: AgentDojo v1.2 (949 security cases) and
//! AgentDyn (560): every user task × every injection task of each suite, through the real
//! toolpacks and the gate, once with Cowork's defaults only and once with the person's
//! reasonable rules; then each user task with no attack, for friction and utility. Prints the
//! tables docs/agentdojo.md publishes, and every case where harm ran without asking.
//!
//! `cargo bench -p cowork-tests --bench agentdojo` (AGENTDOJO_BENCHMARKS=agentdyn to run one,
//! AGENTDOJO_SUITES=banking,shopping to choose suites, AGENTDOJO_USER_TASKS=N for the first N
//! user tasks of each, AGENTDOJO_VERBOSE=1 to list every ask and refusal of a user task with its
//! reason).

use cowork_tests::agentdojo::{Benchmark, Cases, Figures, Gate, Replay};

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run());
}

async fn run() {
    let wanted = |var: &str, name: &str| {
        std::env::var(var).map_or(true, |list| list.split(',').any(|x| x.trim() == name))
    };
    let limit: usize = std::env::var("AGENTDOJO_USER_TASKS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(usize::MAX);
    for benchmark in Benchmark::ALL {
        let chosen: Vec<&str> = (benchmark.suites().iter().copied())
            .filter(|s| wanted("AGENTDOJO_SUITES", s))
            .collect();
        if wanted("AGENTDOJO_BENCHMARKS", benchmark.name()) && !chosen.is_empty() {
            replay(benchmark, &chosen, limit).await;
        }
    }
}

async fn replay(benchmark: Benchmark, chosen: &[&str], limit: usize) {
    let cases = Cases::load(benchmark);
    println!(
        "\n## {} {} replay, suites {chosen:?}, first {} user tasks each",
        benchmark.name(),
        cases.version,
        if limit == usize::MAX {
            "all".to_string()
        } else {
            limit.to_string()
        }
    );
    for (label, reasonable) in [("defaults only", false), ("reasonable rules", true)] {
        let started = std::time::Instant::now();
        let replay = Replay::start(benchmark, chosen, reasonable).await;
        let (rows, total, breaches) = pass(&replay, &cases, chosen, limit).await;
        println!("\n### {label}\n\n{}", Figures::HEADER);
        for row in rows {
            println!("{row}");
        }
        println!("{}", total.row("**all**"));
        println!(
            "\n{} cases in {:.0} s; harmful injected calls that ran without asking: {}",
            total.cases,
            started.elapsed().as_secs_f64(),
            breaches.len()
        );
        for breach in breaches {
            println!("- {breach}");
        }
    }
}

/// One pass over the chosen suites: a table row per suite, the total, and every breach.
async fn pass(
    replay: &Replay,
    cases: &Cases,
    chosen: &[&str],
    limit: usize,
) -> (Vec<String>, Figures, Vec<String>) {
    let mut total = Figures::default();
    let mut rows = Vec::new();
    let mut breaches = Vec::new();
    for suite in chosen {
        let dojo = &cases.suites[*suite];
        let mut figures = Figures::default();
        for user in dojo.user_tasks.iter().take(limit) {
            for injection in &dojo.injection_tasks {
                let case = replay.case(suite, user, injection).await;
                for call in case.unasked_harm() {
                    breaches.push(format!(
                        "{suite} {} × {}: {}",
                        user.id, injection.id, call.tool
                    ));
                }
                figures.add_case(&case);
            }
            let alone = replay.without_attack(suite, user).await;
            if std::env::var_os("AGENTDOJO_VERBOSE").is_some() {
                for call in alone.iter().filter(|c| c.gate != Gate::Allowed) {
                    println!(
                        "{suite} {} {:?} {}: {}",
                        user.id, call.gate, call.tool, call.why
                    );
                }
            }
            figures.add_user_task(&alone);
        }
        rows.push(figures.row(suite));
        total.merge(&figures);
    }
    (rows, total, breaches)
}
