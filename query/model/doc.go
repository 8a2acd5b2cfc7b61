// Package model is the seam between the query engine and trained models:
// the small interface (Model, Scorer) through which a model hands the
// engine the class probabilities of one subgraph, and the description
// (Info) the engine records with its views. Package runs implements it for
// the FASD models trained and persisted by fasd train; tests implement it
// with deterministic stand-ins (package query/querytest).
package model
