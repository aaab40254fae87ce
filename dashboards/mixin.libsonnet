// Kept for existing imports: the mixin lives in mixin/mixin.libsonnet (with `_config`).
import '../mixin/mixin.libsonnet'
