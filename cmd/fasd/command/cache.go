package command

import (
	"context"

	"github.com/fasd-db/fasd/storage"
)

// cacheKey is the context key of the --cache size.
type cacheKey struct{}

// withCache returns ctx carrying the block cache size of --cache.
func withCache(ctx context.Context, b ByteSize) context.Context {
	return context.WithValue(ctx, cacheKey{}, b)
}

// withCacheOf returns o with CacheBytes set from the --cache size ctx
// carries, or o itself when it carries none (the store's default).
func withCacheOf(ctx context.Context, o *storage.Options) *storage.Options {
	b, ok := ctx.Value(cacheKey{}).(ByteSize)
	if !ok || b <= 0 {
		return o
	}
	var c storage.Options
	if o != nil {
		c = *o
	}
	c.CacheBytes = int64(b)
	return &c
}
