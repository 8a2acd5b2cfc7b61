// Package command holds the subcommands of the fasd command-line tool, as
// an importable package so that a host application can mount them in its
// own command tree. NewRoot builds the root command; main only runs it and
// turns the error into an exit code with ExitCode.
//
// # Subcommands
//
//	fasd gen   --out DIR [--preset small|pokec] [knobs]     write a synthetic biased dump
//	fasd load  --db DIR --preset NAME [--dir D | --nodes F --edges F] [column flags]
//	fasd stats --db DIR [--json]                             summarise the stored graph
//	fasd check --db DIR                                      verify every stored invariant
//
// # Exit codes
//
//	0  success
//	1  failure (I/O, engine errors, anything not below)
//	2  usage: unknown command or flag, missing or invalid flag value
//	3  bad input: a dump file is missing or malformed (the message names
//	   file:line and column)
//	4  store state: the store holds an incomplete load (reload with
//	   --replace), already holds a graph (use --replace), holds no graph,
//	   was made by the other backend or an unknown format, or is corrupt
//
// Each subcommand has an options struct with AddFlags and a RunE that
// returns wrapped errors; nothing is global.
package command
