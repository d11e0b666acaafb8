// etcd's own main (go.etcd.io/etcd/server/v3, server/main.go), in a module of
// ours so that `go build` resolves the server module's dependencies from the
// proxy: the server module's go.mod replaces its siblings with local paths,
// which `go install …@version` refuses.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
