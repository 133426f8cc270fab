package stages

import (
	"container/list"
	"crypto/sha256"
	"sync"
)

// vectorCache keeps passage embeddings by text, least recently used out: the
// same passages come back for many queries, and embedding is the cost.
type vectorCache struct {
	mu    sync.Mutex
	max   int
	order *list.List
	items map[[32]byte]*list.Element
}

type cacheEntry struct {
	key [32]byte
	vec []float32
}

// newVectorCache keeps at most max vectors.
func newVectorCache(max int) *vectorCache {
	return &vectorCache{max: max, order: list.New(), items: map[[32]byte]*list.Element{}}
}

func cacheKey(model, text string) [32]byte {
	return sha256.Sum256([]byte(model + "\x00" + text))
}

func (c *vectorCache) get(model, text string) ([]float32, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[cacheKey(model, text)]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*cacheEntry).vec, true
	}
	return nil, false
}

func (c *vectorCache) put(model, text string, v []float32) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := cacheKey(model, text)
	if e, ok := c.items[k]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.items[k] = c.order.PushFront(&cacheEntry{key: k, vec: v})
	for c.order.Len() > c.max {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.items, old.Value.(*cacheEntry).key)
	}
}
