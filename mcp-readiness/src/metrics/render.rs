//! [`Metrics::render`]: the text exposition of `/metrics`, from this crate's families and the
//! registry's other collectors (see "One storage, one text encoder" in [`crate::metrics`]).

use std::sync::atomic::Ordering;

use prometheus::TextEncoder;
use prometheus::proto::MetricFamily;

use super::families::Owner;
use super::recorder::Metrics;

impl Metrics {
    /// The whole registry in the Prometheus text format 0.0.4 (metric families sorted by name,
    /// series by label values), this crate's families and any collectors you registered
    /// yourself. A family another collector made invalid is left out (and logged) rather than
    /// failing the scrape.
    ///
    /// With the recorder's own registry ([`Metrics::new`]), this crate's families are written
    /// from their storage and the registry's other collectors with `prometheus::TextEncoder`,
    /// merged by name. With yours ([`MetricsBuilder::registry`](super::MetricsBuilder::registry)),
    /// everything the registry gathers is written with `prometheus::TextEncoder`, so its prefix
    /// and common labels apply.
    pub fn render(&self) -> String {
        // One generation of the server set, each server one-hot (see `Metrics::reload`).
        let _reload = self
            .inner
            .fam
            .reload_gate
            .read()
            .unwrap_or_else(|p| p.into_inner());
        let _gate = self
            .inner
            .fam
            .gate
            .read()
            .unwrap_or_else(|p| p.into_inner());
        let mut out =
            String::with_capacity(self.inner.last_render_len.load(Ordering::Relaxed) + 1024);
        let encoder = TextEncoder::new();
        // Our families' collectors in the recorder's own registry gather nothing (they only hold
        // the names), so what it gathers is the other collectors; a service's registry gathers
        // our families too.
        let gathered = self.inner.registry.gather();
        let ours = match self.inner.owner {
            Owner::Recorder => self.inner.fam.sorted(),
            Owner::Service => Vec::new(),
        };
        let mut others = gathered.iter().peekable();
        for family in ours {
            while let Some(other) = others.next_if(|o| o.name() < family.name()) {
                encode_other(&encoder, other, &mut out);
            }
            family.encode(&mut out);
        }
        for other in others {
            encode_other(&encoder, other, &mut out);
        }
        self.inner
            .last_render_len
            .store(out.len(), Ordering::Relaxed);
        out
    }
}

fn encode_other(encoder: &TextEncoder, family: &MetricFamily, out: &mut String) {
    // The encoder checks a family before writing any of it, so a refused family leaves nothing
    // half-written.
    if let Err(error) = encoder.encode_utf8(std::slice::from_ref(family), out) {
        tracing::warn!(metric = family.name(), %error, "metric family left out of /metrics");
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use prometheus::Registry;

    use super::*;
    use crate::{
        State,
        resolve::Verdict,
        state::{ConnectionEvent, EventSink},
    };
    use crate::{metrics::ManualClock, state::CallOutcome};

    fn record(metrics: &Metrics) {
        let mine = prometheus::IntCounter::new("aaa_mine_total", "mine").unwrap();
        mine.inc();
        metrics.registry().register(Box::new(mine)).unwrap();
        metrics.on_event(&ConnectionEvent::ServerAdded {
            server: "fi\"les".into(),
            state: State::Ready,
        });
        let files = metrics.server("fi\"les");
        files.observe_resolution(&Verdict::READY, Duration::from_secs(20));
        files.tool("read\nfile").observe_call(CallOutcome::Ok);
        files.observe_operation(
            "tools/call",
            "t",
            Some("timeout"),
            Duration::from_millis(1500),
        );
    }

    #[test]
    fn a_plain_registry_of_the_service_renders_the_bytes_of_the_recorders_own() {
        let clock = ManualClock::new(Duration::from_millis(1_700_000_000_250));
        let own = Metrics::builder().clock(clock.clone()).build().unwrap();
        record(&own);
        let registry = Registry::new();
        let service = Metrics::builder()
            .registry(&registry)
            .clock(clock)
            .build()
            .unwrap();
        record(&service);
        let text = own.render();
        assert!(text.starts_with("# HELP aaa_mine_total mine\n"), "{text}");
        assert_eq!(service.render(), text);
    }

    #[test]
    fn the_recorders_own_registry_gathers_only_the_other_collectors() {
        let own = Metrics::new();
        record(&own);
        let names: Vec<String> = own
            .registry()
            .gather()
            .iter()
            .map(|family| family.name().to_owned())
            .collect();
        assert_eq!(names, ["aaa_mine_total"]);
        let service = Metrics::with_registry(&Registry::new()).unwrap();
        record(&service);
        let families = own.render().matches("# TYPE ").count();
        assert_eq!(service.registry().gather().len(), families);
    }
}
