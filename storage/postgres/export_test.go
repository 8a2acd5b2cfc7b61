package postgres

import "context"

// ExpireLease ends the writer lease of the store dsn names, as the passing
// of its lifetime would.
func ExpireLease(ctx context.Context, dsn string) error {
	loc, err := parseDSN(dsn)
	if err != nil {
		return err
	}
	c, err := connect(ctx, loc)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, "UPDATE "+loc.qualified("_writer")+" SET expires = now() - INTERVAL '1 second'")
	return err
}
