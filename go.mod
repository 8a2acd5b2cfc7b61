module github.com/fasd-db/fasd

go 1.24.0
