// The refusal of a degenerate graph, before anything is written.

package index

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/fasd-db/fasd/index/dump"
)

// checkShape refuses a graph that parsed but cannot be meant: no nodes, and
// unless allowed one label class, one sensitive group or no edge. It runs
// before the write phase, so a refused load never touches the store.
func (l *loader) checkShape() error {
	t, o := l.table, l.opts
	spec := t.Spec()
	edges := filepath.Base(o.Edges)
	if t.Rows == 0 {
		return fmt.Errorf("%w: %s has a header but no data rows: a graph needs nodes", ErrDegenerate, t.Name)
	}
	var errs []error
	if !o.AllowSingleClass && (t.Labels[0] == 0 || t.Labels[1] == 0) {
		var cause string
		if t.Labels[0]+t.Labels[1] == 0 {
			cause = fmt.Sprintf("no node of %s is labelled (label column %q: %d unlabelled)", t.Name, spec.Label.Column, t.NumUnlabelled)
		} else {
			y := 0
			if t.Labels[1] > 0 {
				y = 1
			}
			cause = fmt.Sprintf("every labelled node of %s has class %d (%d nodes, %d unlabelled; label column %q)",
				t.Name, y, t.Labels[y], t.NumUnlabelled, spec.Label.Column)
			if t.NumUnlabelled > 0 && spec.Label.Named == nil {
				cause += "; if the unlabelled value is a class (German credit's -1), map it with a label value map (--label-values 1=1,-1=0)"
			}
		}
		errs = append(errs, fmt.Errorf("%w: %s: a classifier needs both classes (AllowSingleClass / --allow-single-class loads it anyway)", ErrDegenerate, cause))
	}
	if !o.AllowSingleGroup && (t.Groups[0] == 0 || t.Groups[1] == 0) {
		var cause string
		if t.Groups[0]+t.Groups[1] == 0 {
			cause = fmt.Sprintf("no node of %s has a known sensitive value (sensitive column %q: %d unknown)", t.Name, spec.Sensitive.Column, t.UnknownSensitive)
		} else {
			g := 0
			if t.Groups[1] > 0 {
				g = 1
			}
			cause = fmt.Sprintf("every node of %s with a known sensitive value is in group %d (%d nodes, %d unknown; sensitive column %q)",
				t.Name, g, t.Groups[g], t.UnknownSensitive, spec.Sensitive.Column)
			if spec.Sensitive.Named == nil {
				cause += fmt.Sprintf("; the numeric mapping puts values > %g in group 1 (--sens-threshold, --sens-values)", spec.Sensitive.Threshold)
			}
		}
		errs = append(errs, fmt.Errorf("%w: %s: fairness needs both groups (AllowSingleGroup / --allow-single-group loads it anyway)", ErrDegenerate, cause))
	}
	if e := l.report.Edges; !o.AllowNoEdges && e.Kept == 0 {
		var cause string
		switch {
		case e.Lines == 0:
			cause = fmt.Sprintf("%s holds no edge line", edges)
		case e.UnknownEndpoints == e.Lines:
			cause = fmt.Sprintf("all %d edge lines of %s name an endpoint that is not a node of %s, reading endpoints as %s",
				e.Lines, edges, t.Name, endpointsWord(t.Endpoints()))
			if t.Endpoints() == dump.EndpointsRow && spec.IDColumn != "" {
				cause += fmt.Sprintf("; if the edges hold values of the id column %q, use --edge-ids id", spec.IDColumn)
			} else if t.Endpoints() == dump.EndpointsID {
				cause += "; if the edges hold 0-based row indices, use --edge-ids row"
			}
		case e.SelfLoops == e.Lines:
			cause = fmt.Sprintf("all %d edge lines of %s are self-loops", e.Lines, edges)
		default:
			cause = fmt.Sprintf("no edge of %s is kept (%d lines: %d self-loops, %d with an unknown endpoint)", edges, e.Lines, e.SelfLoops, e.UnknownEndpoints)
		}
		errs = append(errs, fmt.Errorf("%w: %s (AllowNoEdges / --allow-no-edges loads it anyway)", ErrDegenerate, cause))
	}
	return errors.Join(errs...)
}

func endpointsWord(e dump.Endpoints) string {
	if e == dump.EndpointsRow {
		return "0-based row indices (--edge-ids row)"
	}
	return "node ids (--edge-ids id)"
}
