// No code: this module pins, by go.sum, the provider modules whose
// CustomResourceDefinitions the test bed installs (cluster/crds.tsv); the
// Go module proxy serves each module's zip, CRD files included.
module metadata-propagation-policy.local/cluster/crds

go 1.26.8

require (
	github.com/crossplane/crossplane/v2 v2.3.4
	sigs.k8s.io/cluster-api-provider-aws/v2 v2.11.1
	sigs.k8s.io/cluster-api-provider-gcp v1.12.0
)
