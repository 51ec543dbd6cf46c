package cache

import (
	"sync"
	"testing"
)

func TestNewEvictsLeastRecentlyUsed(t *testing.T) {
	c := New[string, int](2)
	c.Add("a", 1)
	c.Add("b", 2)
	if v, ok := c.Get("a"); !ok || v != 1 { // a is now the most recent
		t.Fatalf("Get(a) = %v, %v", v, ok)
	}
	c.Add("c", 3)
	if _, ok := c.Get("b"); ok {
		t.Error("b kept: the least recently used entry must go")
	}
	for k, want := range map[string]int{"a": 1, "c": 3} {
		if v, ok := c.Get(k); !ok || v != want {
			t.Errorf("Get(%s) = %v, %v; want %v", k, v, ok, want)
		}
	}
	if c.Len() != 2 {
		t.Errorf("Len = %d, want 2", c.Len())
	}
}

func TestNewWeightedBoundsCost(t *testing.T) {
	c := NewWeighted[string, string](10, func(_, v string) int { return len(v) })
	c.Add("a", "xxxx")
	c.Add("b", "yyyy")
	c.Get("a")
	c.Add("c", "zzzz") // 12 > 10: b, the least recently used, goes
	if _, ok := c.Get("b"); ok {
		t.Error("b kept past the cost bound")
	}
	if _, ok := c.Get("a"); !ok {
		t.Error("a evicted though used after b")
	}
	if c.Cost() != 8 {
		t.Errorf("Cost = %d, want 8", c.Cost())
	}
	c.Add("a", "x") // replacing frees the old cost: 1 + 4
	c.Add("d", "wwww")
	if c.Len() != 3 {
		t.Errorf("Len = %d, want 3 (a, c, d: cost 9)", c.Len())
	}
	c.Add("a", "too long a value") // over the bound: not kept, the old one dropped
	if v, ok := c.Get("a"); ok {
		t.Errorf("Get(a) = %q: a value over the bound, or a stale one, kept", v)
	}
}

func TestRemove(t *testing.T) {
	c := NewWeighted[string, string](10, func(_, v string) int { return len(v) })
	c.Add("a", "xxxx")
	c.Add("b", "yy")
	c.Remove("a")
	c.Remove("none")
	if _, ok := c.Get("a"); ok {
		t.Error("a kept after Remove")
	}
	if c.Len() != 1 || c.Cost() != 2 {
		t.Errorf("Len, Cost = %d, %d; want 1, 2 (b only)", c.Len(), c.Cost())
	}
}

func TestRemoveIf(t *testing.T) {
	c := NewWeighted[string, string](10, func(_, v string) int { return len(v) })
	c.Add("a", "xxxx")
	c.Add("b", "yy")
	c.Add("c", "zzz")
	if n := c.RemoveIf(func(k, _ string) bool { return k != "b" }); n != 2 {
		t.Errorf("RemoveIf dropped %d, want 2", n)
	}
	if _, ok := c.Get("b"); !ok || c.Len() != 1 || c.Cost() != 2 {
		t.Errorf("after RemoveIf: b kept %v, Len %d, Cost %d; want b only, cost 2", ok, c.Len(), c.Cost())
	}
}

func TestConcurrent(t *testing.T) {
	c := NewWeighted[int, int](64, func(int, int) int { return 1 })
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 1000 {
				c.Add(i%100, g)
				c.Get(i % 50)
			}
		})
	}
	wg.Wait()
	if n := c.Len(); n != 64 {
		t.Errorf("Len = %d, want 64", n)
	}
}
