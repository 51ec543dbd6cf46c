// Package cache is the module's one bounded cache: a thread-safe LRU over
// hashicorp/golang-lru/v2 (ADR 0041), bounded by its number of entries
// (New) or by the summed cost of its values (NewWeighted, for caches of
// stored bytes). A cache belongs to the struct that builds it; none is a
// package-level variable, so two owners in one process never share one.
package cache

import (
	"math"
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Cache is a bounded LRU cache, safe for concurrent use. Get marks an
// entry used; Add evicts the least recently used entries past the bound.
type Cache[K comparable, V any] struct {
	mu  sync.Mutex
	lru *simplelru.LRU[K, V]
	// cost weighs a value (NewWeighted; nil: New, bounded by entries);
	// total is the cost held, maxCost its bound.
	cost           func(K, V) int
	total, maxCost int
}

// New returns an empty cache of at most size entries (size > 0).
func New[K comparable, V any](size int) *Cache[K, V] {
	l, err := simplelru.NewLRU[K, V](size, nil)
	if err != nil {
		panic("cache: " + err.Error())
	}
	return &Cache[K, V]{lru: l}
}

// NewWeighted returns an empty cache whose entries' costs (cost, ≥ 0) sum
// to at most maxCost (> 0): the least recently used entries are evicted
// until a new one fits. A value costing more than maxCost is not kept.
func NewWeighted[K comparable, V any](maxCost int, cost func(K, V) int) *Cache[K, V] {
	if maxCost <= 0 {
		panic("cache: must provide a positive cost bound")
	}
	c := &Cache[K, V]{cost: cost, maxCost: maxCost}
	l, err := simplelru.NewLRU[K, V](math.MaxInt, func(k K, v V) { c.total -= c.cost(k, v) })
	if err != nil {
		panic("cache: " + err.Error())
	}
	c.lru = l
	return c
}

// Get returns the value kept for k, if any.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Get(k)
}

// Add keeps v for k, replacing any value kept for it.
func (c *Cache[K, V]) Add(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cost == nil {
		c.lru.Add(k, v)
		return
	}
	n := c.cost(k, v)
	if n > c.maxCost {
		c.lru.Remove(k) // the old value is stale: never serve it
		return
	}
	if old, ok := c.lru.Peek(k); ok {
		c.total -= c.cost(k, old)
	}
	c.lru.Add(k, v)
	c.total += n
	for c.total > c.maxCost {
		c.lru.RemoveOldest()
	}
}

// Remove drops the value kept for k, if any (its cost too).
func (c *Cache[K, V]) Remove(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Remove(k)
}

// RemoveIf drops every entry for which drop reports true (their cost
// too) and returns how many it dropped.
func (c *Cache[K, V]) RemoveIf(drop func(K, V) bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, k := range c.lru.Keys() {
		if v, ok := c.lru.Peek(k); ok && drop(k, v) {
			c.lru.Remove(k)
			n++
		}
	}
	return n
}

// Len returns the number of entries kept.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// Cost returns the summed cost of the entries kept (NewWeighted; for New,
// 0).
func (c *Cache[K, V]) Cost() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}
