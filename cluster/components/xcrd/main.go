// xcrd prints the CustomResourceDefinition Crossplane generates for the
// composite resource of a CompositeResourceDefinition (or, with -claim, for
// its claim): the XRD (YAML or JSON, as the API server stores it) on stdin,
// the CRD (JSON) on stdout. It calls the functions Crossplane's definition
// controllers call (crossplane-runtime pkg/xcrd.ForCompositeResource and
// ForCompositeResourceClaim), so the test bed's XR and claim kinds are served
// with the schema a real Crossplane would install, pruning included, without
// running Crossplane itself.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/crossplane/crossplane-runtime/v2/pkg/xcrd"
	v1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

func main() {
	claim := flag.Bool("claim", false, "print the claim's CRD instead of the composite resource's")
	flag.Parse()
	if err := run(os.Stdin, os.Stdout, *claim); err != nil {
		fmt.Fprintf(os.Stderr, "xcrd: %v\n", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer, claim bool) error {
	text, err := io.ReadAll(in)
	if err != nil {
		return fmt.Errorf("cannot read the XRD: %w", err)
	}
	// apiextensions.crossplane.io/v2 and /v1 XRDs share these fields; the
	// definition controller reads both through the v1 type.
	xrd := &v1.CompositeResourceDefinition{}
	if err := yaml.UnmarshalStrict(text, xrd); err != nil {
		return fmt.Errorf("the XRD does not parse: %w", err)
	}
	generate := xcrd.ForCompositeResource
	if claim {
		generate = xcrd.ForCompositeResourceClaim
	}
	crd, err := generate(xrd)
	if err != nil {
		return fmt.Errorf("cannot generate the CRD of %s: %w", xrd.GetName(), err)
	}
	crd.APIVersion, crd.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
	encoder := json.NewEncoder(out)
	encoder.SetIndent("", "  ")
	return encoder.Encode(crd)
}
