package main

import (
	"flag"
	"fmt"
	"log"
	"os"
)

func main() {
	write := flag.Bool("w", false, "require kapi's modules at the commit given as the argument (default HEAD) in every nested go.mod")
	proxyDir := flag.String("proxy", "", "write a module proxy of the repository into `DIR` and print its GOPROXY value")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: go run ./internal/modules [-w [COMMIT]] [-proxy DIR]")
		flag.PrintDefaults()
	}
	flag.Parse()
	log.SetFlags(0)
	r, err := findRepo()
	if err != nil {
		log.Fatal(err)
	}
	switch {
	case *write:
		rev := "HEAD"
		if flag.NArg() > 0 {
			rev = flag.Arg(0)
		}
		c, err := r.commit(rev)
		if err != nil {
			log.Fatal(err)
		}
		if err := r.write(c); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("nested modules require kapi's modules at %s\n", c.pseudoVersion())
	case *proxyDir != "":
		p, err := r.buildProxy(*proxyDir)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("GOPROXY=file://%s (kapi at %s as required, every module at %s from the work tree)\n", p.Dir, p.Required, p.Tree)
	default:
		c, err := r.check()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			fmt.Fprintln(os.Stderr, "fix with: go run ./internal/modules -w (once the commit it names is in HEAD's history)")
			os.Exit(1)
		}
		fmt.Printf("nested modules require kapi's modules at %s, a commit in HEAD's history\n", c.pseudoVersion())
	}
}
