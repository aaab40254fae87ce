// The TLS certificate of an HTTPS MCP server (`mcp_readiness_tls_certificate_expiry_timestamp_seconds`:
// the leaf certificate's notAfter, set at each connect of a supervised server and on each probe
// answer over HTTPS). A certificate that runs out makes every connection fail its TLS handshake:
// the server reads absent, and no reload, token or wait budget of ours helps. Whoever runs the
// MCP server renews it (its operator, through their certificate issuer), so this warns weeks
// ahead, to their queue, not to on-call's platform.
//
// Thresholds: automated issuers renew with about 30 days left (Let's Encrypt's clients at a
// third of a 90-day life), so under 21 days means the renewal has failed for over a week and
// leaves three working weeks for one by hand or through a change process; under 7 days is
// the last working week: it becomes critical. Kept apart from alerts.libsonnet: its own group,
// its own `_config` keys.
local lib = import 'lib.libsonnet';

{
  _config+:: {
    // Days before a server's TLS certificate expires that it warns, and that it is critical.
    tlsCertificateWarningDays: 21,
    tlsCertificateCriticalDays: 7,
    // How long a certificate expiry the exporter stopped reporting (an exporter outage, a
    // probe that failed before TLS) is still read.
    tlsCertificateHoldWindow: '1h',
    'for'+: {
      MCPServerTLSCertificateExpiring: '15m',
    },
  },

  prometheusAlerts+:: {
    local cfg = $._config,
    local v = lib.vars(cfg) + { hold: cfg.tlsCertificateHoldWindow },
    local where = lib.where(cfg),
    // Seconds left on each server's certificate: the soonest over the workload's replicas, each
    // held for the hold window (the newest certificate wins at once: `max_over_time`).
    local left = |||
      min by (%(ws)s) (
        max_over_time(mcp_readiness_tls_certificate_expiry_timestamp_seconds%(s)s[%(hold)s])
      ) - time()
    ||| % v,
    local expiring(severity, days) = {
      alert: 'MCPServerTLSCertificateExpiring',
      // Value: seconds until the certificate expires (negative: it has expired).
      expr: '%s< %d\n' % [left, days * 86400],
      'for': cfg['for'].MCPServerTLSCertificateExpiring,
      labels: { severity: severity },
      annotations: {
        summary: 'The TLS certificate of MCP server `{{ $labels.server }}` {{ if lt $value 0.0 }}has expired{{ else }}expires in {{ $value | humanizeDuration }}{{ end }}',
        // (`humanizeDuration` of an expired certificate's negative value reads `-2d 0h 0m 0s`.)
        description: 'The leaf TLS certificate that MCP server `{{ $labels.server }}` presents to job {{ $labels.job }}' + where + ' '
                     + '{{ if lt $value 0.0 }}has expired (time left: {{ $value | humanizeDuration }}){{ else }}expires in {{ $value | humanizeDuration }}{{ end }} '
                     + '(under ' + days + ' days). When it runs out every connection fails its TLS handshake and the server reads absent; nothing on this side (a reload, a token, a wait budget) helps. '
                     + 'Who acts: the operator of that MCP server renews the certificate with its issuer (their ACME client or certificate team); for a hosted server, its vendor. On-call for the agents only tells them. '
                     + 'Next step: send them this alert; `curl -s "http://<serve>/probe?target=<its URL>&debug=true"` shows the certificate\'s end date in its `tls` phase. It resolves when the server presents a renewed certificate.',
        runbook_url: lib.runbook(cfg, 'MCPServerTLSCertificateExpiring'),
      } + lib.dashboard(cfg, true),
    },

    groups+: [
      {
        name: 'mcp-readiness.tls',
        rules: [
          expiring('warning', cfg.tlsCertificateWarningDays),
          expiring('critical', cfg.tlsCertificateCriticalDays),
        ],
      },
    ],
  },
}
