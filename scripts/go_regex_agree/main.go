// Command go_regex_agree checks a table of node-sync patterns against Go's
// regexp.Compile, the parser Cluster API's --additional-sync-machine-labels
// and -annotations flags use: each row says "ok" or "refused", or
// "differs" (Go accepts it, and reads it otherwise than regex-lite), and
// the policy's own test (crates/core/src/capi/go_regex.rs) holds the policy
// to the same rows. Usage: go run . <table.tsv>
package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run . <table.tsv>")
		os.Exit(2)
	}
	file, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer file.Close()
	rows, wrong := 0, 0
	scanner := bufio.NewScanner(file)
	for line := 1; scanner.Scan(); line++ {
		text := scanner.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		pattern, verdict, found := strings.Cut(text, "\t")
		if !found || (verdict != "ok" && verdict != "refused" && verdict != "differs") {
			fmt.Fprintf(os.Stderr, "%s:%d: expected <pattern>\\t<ok|refused|differs>\n", os.Args[1], line)
			os.Exit(2)
		}
		rows++
		_, err := regexp.Compile(pattern)
		expected := verdict
		if verdict == "differs" {
			expected = "ok"
		}
		if got := map[bool]string{true: "ok", false: "refused"}[err == nil]; got != expected {
			wrong++
			fmt.Fprintf(os.Stderr, "%s:%d: %q: the table says %s, Go says %s (%v)\n", os.Args[1], line, pattern, verdict, got, err)
		}
	}
	if err := scanner.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if wrong > 0 {
		os.Exit(1)
	}
	fmt.Printf("go_regex_agree: Go's regexp agrees with all %d rows of %s\n", rows, os.Args[1])
}
