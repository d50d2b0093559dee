package analyzer_test

import (
	"fmt"

	"github.com/mailledger/mailledger/analyzer"
)

func ExampleTermSet() {
	var terms analyzer.TermSet
	terms.Add("Résumé attached: CV_2024.pdf")
	terms.Add("東京タワー")
	fmt.Printf("%q\n", terms.Terms())
	// Output:
	// ["resume" "attached" "resume attached" "cv" "attached cv" "2024" "cv 2024" "pdf" "2024 pdf" "東京" "京タ" "東京 京タ" "タワ" "京タ タワ" "ワー" "タワ ワー"]
}

func ExampleParseQuery() {
	q, err := analyzer.ParseQuery(`resume "cv 2024.pdf" invo* タワー`)
	if err != nil {
		panic(err)
	}
	fmt.Printf("terms %q\nprefixes %q\n", q.Terms, q.Prefixes)
	// Output:
	// terms ["resume" "cv 2024" "2024 pdf" "タワ ワー"]
	// prefixes ["invo"]
}
