package sim

// WithHostMedium is cfg with its CPU tiers publishing under m instead of
// vLLM's "CPU" (a host tier whose events carry token ids, as KVBM's).
func WithHostMedium(cfg Config, m Medium) Config {
	cfg.hostMedium = m
	return cfg
}
