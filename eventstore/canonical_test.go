package eventstore_test

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/eventstore"
)

var canonicalSeeds = []string{
	`{"b":1,"a":"x","c":{"z":[1,2,{"y":null,"x":true}],"a":false}}`,
	`{"actor":"dpo@example.org","client_ip":"192.0.2.10","user_agent":"ua","correlation_id":"c"}`,
	`{"s":"tab\there \"q\" back\\slash\nnl\rcr","u":"é ü 日本 \u2028 \ud83d\ude00"}`,
	`{"n":-0}`, `{"n":1.5}`, `{"n":1e3}`, `{"n":123456789012345}`, `{"n":9007199254740991}`,
	`{"n":0.000001}`, `{"n":1e-7}`, `{"n":1e21}`, `{"n":333333333.33333329}`,
	`{"s":"\u003c\u0026\u003e\u00e9\u001f"}`, `[]`, `{}`, `[{}, 1]`, `"x"`, `12`,
	`{"é":1,"z":2,"\u20ac":3,"\ud83d\ude00":4,"\ufb33":5}`, ` { "a" : [ 1 , [ 2 , [ 3 ] ] ] } `,
}

// TestCanonicalizeMatchesJCS checks the canonicalizer against gowebpki/jcs, an independent
// RFC 8785 implementation, on hand-picked and random documents.
func TestCanonicalizeMatchesJCS(t *testing.T) {
	docs := append([]string{}, canonicalSeeds...)
	rng := rand.New(rand.NewSource(8785))
	for i := 0; i < 2000; i++ {
		raw, err := json.Marshal(randomJSONValue(rng, 3))
		require.NoError(t, err)
		docs = append(docs, string(raw))
	}
	for _, doc := range docs {
		want, err := jcs.Transform([]byte(doc))
		require.NoError(t, err, doc)
		got, err := eventstore.Canonicalize([]byte(doc))
		require.NoError(t, err, doc)
		assert.Equal(t, string(want), string(got), "doc %s", doc)
	}
}

func FuzzCanonicalize(f *testing.F) {
	for _, doc := range canonicalSeeds {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		want, err := jcs.Transform(doc)
		got, err2 := eventstore.Canonicalize(doc)
		if err != nil || err2 != nil {
			return // one of them rejects input the other tolerates (e.g. duplicate keys)
		}
		if string(want) != string(got) {
			t.Fatalf("doc %q: got %s; want %s", doc, got, want)
		}
	})
}

func randomJSONValue(rng *rand.Rand, depth int) any {
	switch k := rng.Intn(8); {
	case depth == 0 || k < 2:
		return randomJSONString(rng)
	case k == 2:
		return rng.Int63n(1<<53) - 1<<52
	case k == 3:
		return rng.NormFloat64() * 1e6
	case k == 4:
		return rng.Intn(2) == 0
	case k == 5:
		arr := make([]any, rng.Intn(4))
		for i := range arr {
			arr[i] = randomJSONValue(rng, depth-1)
		}
		return arr
	default:
		obj := map[string]any{}
		for i := rng.Intn(5); i > 0; i-- {
			obj[randomJSONString(rng)] = randomJSONValue(rng, depth-1)
		}
		return obj
	}
}

func randomJSONString(rng *rand.Rand) string {
	pieces := []string{"a", "Z", "é", "日", "😀", "\u2028", "\x01", "\"", "\\", "<", "&", "\ufb33", "€", " ", "\n"}
	var b strings.Builder
	for i := rng.Intn(6); i > 0; i-- {
		b.WriteString(pieces[rng.Intn(len(pieces))])
	}
	return b.String()
}
