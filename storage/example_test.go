package storage_test

import (
	"fmt"
	"log"

	"github.com/fasd-db/fasd/storage"
	_ "github.com/fasd-db/fasd/storage/pebble" // links the default engine
)

// Open a store (here in memory; give a directory for an on-disk one),
// write two keys in one atomic batch and read one back.
func ExampleOpen() {
	s, err := storage.Open("", &storage.Options{InMemory: true})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	b := s.NewBatch()
	defer b.Close()
	if err := b.Set([]byte("greeting"), []byte("hello")); err != nil {
		log.Fatal(err)
	}
	if err := b.Set([]byte("name"), []byte("fasd")); err != nil {
		log.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		log.Fatal(err)
	}
	v, err := s.Get([]byte("greeting"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Backend(), string(v))
	// Output: pebble hello
}
