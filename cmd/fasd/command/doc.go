// Package command holds the subcommands of the fasd command-line tool, as
// an importable package so that a host application can mount them in its
// own command tree. NewRoot builds the root command; main only runs it and
// turns the error into an exit code with ExitCode.
//
// # Subcommands
//
// The graph (package index):
//
//	fasd gen   --out DIR [--size small|removable|pokec] [knobs]   write a synthetic biased dump
//	fasd load  --db DIR (--dataset NAME [--dir D] | --nodes F --edges F [column flags])
//	fasd stats --db DIR [--json]                             summarise the stored graph
//	fasd check --db DIR                                      verify every stored invariant
//
// The method (package fasd/pipeline, run through package runs):
//
//	fasd train --db DIR [--profile NAME] [--seed S] [--config F.toml] [--set key=val ...]
//	fasd eval  --db DIR [--profile NAME] [--seeds 10] [--ablations] [--json]
//	fasd sweep --db DIR [--profile NAME] [--steps 1,2,3,5,8] [--lambdas 0,0.1,1,10] [--out DIR]
//
// A dataset (load) is a published graph's file names and conventions, a
// profile (train, eval, sweep) a set of hyper-parameters, a size (gen) a
// generator setting; --preset, the one name all three had, still works as
// an old spelling (flagnames.go).
//
// The engine and its views (package query; serve puts it behind package
// httpapi):
//
//	fasd materialize --db DIR [--workers N] [--json]
//	fasd predict     --db DIR (--node ID ... | --all) [--json]
//	fasd update      --db DIR [--nodes F.json] [--add-edges F] [--remove-edges F] [--refresh]
//	fasd refresh     --db DIR [--workers N] [--json]
//	fasd audit       --db DIR [--set test|labelled] [--json]
//	fasd serve       --db DIR [--addr 127.0.0.1:8080] [--token-file F] [--read-only] [--allow-host H]
//	fasd demo        [--dir DIR] [--nodes N] [--set key=val ...]   the README's main job
//
// # Exit codes
//
//	0  success
//	1  failure (I/O, engine errors, anything not below)
//	2  usage: unknown command or flag, missing or invalid flag value
//	3  bad input: a dump file is missing or malformed (the message names
//	   file:line and column), an update is invalid for the graph
//	   (query.ErrInvalid, naming the field), or an update file names an
//	   unknown or deleted node (file:line)
//	4  store state: the store holds an incomplete load (reload with
//	   --replace), already holds a graph (use --replace), holds no graph,
//	   was made by the other backend or an unknown format, is corrupt or
//	   damaged, is not a store (a regular file, an empty or missing
//	   directory: only load creates one), or holds no trained models (run
//	   fasd train first)
//
// A full disk or an I/O error while writing ends a command with exit 1 and
// a one-line error; what was committed before stays. check and stats open
// the store read-only (they work on a full disk and write nothing).
//
// # I/O-fault hook
//
// In a build with the crashtest tag, with FASD_TEST_FAULT_AT=OP:N:ERRNO in
// the environment (FaultAtEnv) every store the command opens fails its
// N-th file operation of kind OP, and every later one, with ERRNO; the
// I/O-fault tests of cmd/fasd use it.
//
// # Crash-injection hook
//
// In a build with the crashtest tag (go build -tags crashtest, as make
// crash does), FASD_TEST_KILL_AT=STAGE:N in the environment (KillAtEnv)
// makes the process kill itself at the N-th progress report of STAGE; the
// crash tests of cmd/fasd use it to stop a command at a chosen stage
// boundary. A default build has no such hook: it reads no such variable.
//
// Each subcommand has an options struct with AddFlags and a RunE that
// returns wrapped errors; nothing is global.
package command
