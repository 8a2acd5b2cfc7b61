// Package pgtest gives tests a throwaway table on the PostgreSQL test
// server: a fresh table per test, dropped when the test ends, optionally
// filled with a copy of a local store. Without a server (the
// FASD_TEST_POSTGRES variable unset) the calling test is skipped, as by
// storagetest.PostgresDSN.
package pgtest
