package command

import (
	"errors"
	"fmt"
	"net"

	"github.com/fasd-db/fasd/httpapi"
	"github.com/spf13/cobra"
)

func newServeCommand() *cobra.Command {
	o := &EngineOptions{}
	var addr string
	var maxBody int64
	var maxItems int
	cmd := &cobra.Command{
		Use:   "serve --db DIR [--addr 127.0.0.1:8080]",
		Short: "Serve fair predictions and updates over a JSON HTTP API",
		Long: `Serve answers, until interrupted (then it shuts down gracefully):

  GET    /v1/nodes/{id}/prediction   fair prediction of a node (external id)
  GET    /v1/nodes/{id}/subgraph     debiased subgraph rooted at a node
  POST   /v1/predict                 {"ids":[...], "cold":true}
  POST   /v1/edges, DELETE /v1/edges {"edges":[[u,v], ...]}
  POST   /v1/nodes                   {"nodes":[{"id", "features", "sensitive",
                                      "label", "split", "edges"}]}
  POST   /v1/refresh                 re-debias dirty subgraphs
  GET    /v1/audit?set=test|labelled fairness audit of the views
  GET    /healthz, GET /metrics      status; Prometheus text format

Errors are JSON {"error": ...} with a 4xx status for bad input.

` + exitHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if maxBody < 0 || maxItems < 0 {
				return usagef("serve: limits must not be negative")
			}
			e, _, err := o.openEngine("serve", cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, e.Close()) }()
			errOut := cmd.ErrOrStderr()
			err = httpapi.Serve(cmd.Context(), e, addr, &httpapi.Options{MaxBodyBytes: maxBody, MaxItems: maxItems},
				func(a net.Addr) { fmt.Fprintf(errOut, "serving on http://%s\n", a) })
			if err != nil {
				return fmt.Errorf("serve: %w", err)
			}
			fmt.Fprintln(errOut, "shut down")
			return nil
		},
	}
	o.AddFlags(cmd.Flags())
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "listen address")
	cmd.Flags().Int64Var(&maxBody, "max-body", 0, "request body limit in bytes (0: 1 MiB)")
	cmd.Flags().IntVar(&maxItems, "max-items", 0, "ids, edges or nodes per request (0: 10000)")
	return cmd
}
