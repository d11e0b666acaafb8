module metadata-propagation-policy.local/crds/managed-resources

go 1.26.8

require (
	github.com/upbound/provider-aws/v2 v2.7.0
	github.com/upbound/provider-azure/v2 v2.6.0
	github.com/upbound/provider-gcp v1.14.0
)
