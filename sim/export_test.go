package sim

// RetryWait exposes retryWait to the external tests.
var RetryWait = retryWait
