// Package hashmix is routesim's one hash combiner: the engine chains KV
// block contents with it and the routers place workers and keys on hash
// rings with it.
package hashmix

// Mix combines a running hash with a value (a splitmix64 finaliser).
func Mix(h, v uint64) uint64 {
	x := h ^ (v + 0x9e3779b97f4a7c15 + h<<6 + h>>2)
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
