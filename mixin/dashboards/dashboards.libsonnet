{
  grafanaDashboards+:: {
    'mcp-readiness-fleet.json': (import 'fleet.libsonnet')($._config),
    'mcp-readiness-server.json': (import 'server.libsonnet')($._config),
  },
}
