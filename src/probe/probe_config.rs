//! What `readiness.probe` configures: the allow-list of the default module, the bound on probes
//! in flight, and the named [`ProbeModule`]s.

use std::collections::BTreeMap;
use std::time::Duration;

use super::target_pattern::TargetPattern;
use crate::client::{OAuthSpec, ProtocolGenerations};
use crate::secret::Secret;

/// `readiness.probe`: turns on `GET /probe` on `serve` (and on [`Prober`](super::Prober)s built
/// from it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeConfig {
    /// The default module (a probe without `module`): the targets it may reach (`targets`), its
    /// timeout (`timeout`); it sends no credentials and offers both protocol generations.
    pub default_module: ProbeModule,
    /// The most probes running at once (`max_in_flight`); as many more may wait for a turn, for
    /// at most a second, and the rest are answered `503` at once.
    pub max_in_flight: usize,
    /// The named modules (`modules`), by name.
    pub modules: BTreeMap<String, ProbeModule>,
}

/// How to probe: which targets, with which credentials, how long, which protocol generations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeModule {
    /// The targets this module may reach; its credentials go to these only.
    pub targets: Vec<TargetPattern>,
    /// Request headers (e.g. `Authorization`), values secret.
    pub headers: BTreeMap<String, Secret>,
    /// OAuth with a credential store, instead of an `Authorization` header.
    pub oauth: Option<OAuthSpec>,
    /// The longest a probe may take (the scrape's own timeout, less a margin, when shorter).
    pub timeout: Duration,
    /// The protocol generations the handshake offers.
    pub generations: ProtocolGenerations,
}

impl ProbeConfig {
    /// Default `max_in_flight`.
    pub const DEFAULT_MAX_IN_FLIGHT: usize = 16;
    /// Default `timeout` of a module (Prometheus' default scrape timeout).
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

    /// A configuration whose default module allows `targets`, with the defaults for the rest.
    pub fn allowing(targets: Vec<TargetPattern>) -> ProbeConfig {
        ProbeConfig {
            default_module: ProbeModule::without_credentials(targets),
            max_in_flight: Self::DEFAULT_MAX_IN_FLIGHT,
            modules: BTreeMap::new(),
        }
    }

    /// How many modules probes can name: the default module and each named one (what `serve`
    /// exports as `mcp_readiness_probe_modules`).
    pub fn module_count(&self) -> usize {
        1 + self.modules.len()
    }

    /// The module a probe names (`None`: the default module).
    pub fn module(&self, name: Option<&str>) -> Option<&ProbeModule> {
        match name {
            None => Some(&self.default_module),
            Some(name) => self.modules.get(name),
        }
    }
}

impl ProbeModule {
    /// A module that sends no credentials and offers both generations, within the default
    /// timeout.
    pub fn without_credentials(targets: Vec<TargetPattern>) -> ProbeModule {
        ProbeModule {
            targets,
            headers: BTreeMap::new(),
            oauth: None,
            timeout: ProbeConfig::DEFAULT_TIMEOUT,
            generations: ProtocolGenerations::Both,
        }
    }

    /// Whether the module sends credentials (headers or OAuth).
    pub fn has_credentials(&self) -> bool {
        !self.headers.is_empty() || self.oauth.is_some()
    }
}
