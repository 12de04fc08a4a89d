//! Issue 20 item 8: the work-item lease outlasts the provider's slowest
//! extraction, so a second `process` never takes over a live one.

mod common;

use std::time::Duration;

use kith::extract::Provider;

#[test]
fn the_lease_is_sized_from_the_providers_worst_case() {
    let (_t, _d, memory) = common::pack();
    // The offline extractor: the default lease.
    assert_eq!(memory.lease(), kith::ingest::DEFAULT_LEASE);

    // An LLM with 60 s requests and 3 retries can take 324 s per question;
    // extraction and pronoun repair each ask one.
    let config = kith::extract::openai::OpenAiConfig::new("http://127.0.0.1:1/v1", "m");
    let llm = kith::extract::openai::OpenAiCompatible::new(config).unwrap();
    let worst = llm.worst_case().unwrap();
    assert_eq!(worst, Duration::from_secs(324));
    let memory = memory.with_provider(std::sync::Arc::new(llm));
    assert_eq!(
        memory.lease(),
        worst * 2 + kith::ingest::LEASE_MARGIN,
        "longer than both questions at their slowest"
    );
    // An operator's explicit lease (KITH_LEASE_SECS) wins.
    let memory = memory.with_lease(Duration::from_secs(5));
    assert_eq!(memory.lease(), Duration::from_secs(5));
}
