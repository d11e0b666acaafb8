// xcrd prints the CustomResourceDefinition Crossplane generates for the
// composite resource of a CompositeResourceDefinition: the XRD (YAML or
// JSON) on stdin, the CRD (JSON) on stdout. It calls the function
// Crossplane's definition controller calls (crossplane-runtime
// pkg/xcrd.ForCompositeResource), so the test bed's XR kinds are served with
// the schema a real Crossplane would install, pruning included, without
// running Crossplane itself.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/crossplane/crossplane-runtime/v2/pkg/xcrd"
	v1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "xcrd: %v\n", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
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
	crd, err := xcrd.ForCompositeResource(xrd)
	if err != nil {
		return fmt.Errorf("cannot generate the CRD of %s: %w", xrd.GetName(), err)
	}
	crd.APIVersion, crd.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
	encoder := json.NewEncoder(out)
	encoder.SetIndent("", "  ")
	return encoder.Encode(crd)
}
