package main

import (
	"strings"
	"unicode"
)

// The fixed word lists of the generated mail: names, companies, accented words and the
// words of the attachments. None of their tokens is ever searched for: the vocabulary the
// queries draw from leaves out every token these lists make (see reservedTokens), so that
// a query word is found only where the generator put it as a vocabulary word.
var (
	firstNames = []string{
		"Anna", "Ben", "Clara", "David", "Emma", "Felix", "Greta", "Hugo", "Ida", "Jonas",
		"Lena", "Max", "Nora", "Paul", "Sara", "Tom", "Jürgen", "Zoë", "José", "Françoise",
		"Søren", "Renée", "Chloé", "Björn", "Inès", "Łukasz", "Małgorzata", "Noémie", "Rui", "Oğuz",
		"Aisha", "Kenji", "Priya", "Olga", "Mateo", "Fatima", "Liam", "Yuki", "Hannah", "Omar",
	}
	lastNames = []string{
		"Bauer", "Fischer", "Hoffmann", "Koch", "Meyer", "Müller", "Richter", "Schulz", "Wagner", "Weber",
		"Wolf", "Zimmermann", "Dubois", "Lefèvre", "García", "Núñez", "Rossi", "Bianchi", "Nowak", "Kowalski",
		"Jensen", "Nielsen", "Smith", "Johnson", "Brown", "Taylor", "O'Neill", "Tanaka", "Sato", "Kim",
		"Silva", "Santos", "Öztürk", "Yılmaz", "Novák", "Horváth", "Andersson", "Björk", "Patel", "Khan",
	}
	companies = []string{
		"acme", "globex", "initech", "umbrella", "hooli", "vandelay", "wayne", "stark", "tyrell", "cyberdyne",
		"wonka", "soylent", "aperture", "massive", "oscorp", "gringotts", "monarch", "zorg", "nakatomi", "dunder",
		"wernham", "bluth", "pied", "sterling", "prestige",
	}
	domainTails = []string{"com", "de", "fr", "co.uk", "org", "net", "io", "ch"}
	// accentedWords are real words with diacritics, sprinkled through the text.
	accentedWords = []string{
		"café", "naïve", "résumé", "façade", "über", "Zürich", "Ångström", "señor", "crème", "déjà",
		"élan", "fiancée", "garçon", "jalapeño", "piñata", "São", "smörgåsbord", "Bogotá", "Málaga", "Kraków",
		"Ærø", "straße", "Größe", "prêt", "coördinate", "entrée", "hôtel", "forêt", "Čapek", "Dvořák",
	}
	// attachmentWords make the attachments' text: a small table of items.
	attachmentWords = []string{"item", "quantity", "price", "widget", "gadget", "sprocket", "bolt", "washer", "total", "unit"}
	// fixedTexts are the greetings, closings and signature lines of the bodies.
	greetings = []string{"Hi %s,", "Hello %s,", "Dear %s,", "Good morning %s,", "%s,"}
	closings  = []string{"Best regards,", "Kind regards,", "Thanks,", "Cheers,", "Sincerely,", "Regards,"}
	htmlWords = "html head body div p br style font family sans serif size color"
	mimeWords = "report notes minutes agenda txt csv quarterly summary"
)

// foldAccents returns s in lower case with the diacritics of its letters removed (ø, ł, ß,
// æ, ı turned into their plain letters), as the search rules will fold them.
func foldAccents(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if plain, ok := foldTable[r]; ok {
			b.WriteString(plain)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

var foldTable = map[rune]string{
	'à': "a", 'á': "a", 'â': "a", 'ã': "a", 'ä': "a", 'å': "a", 'æ': "ae", 'ç': "c", 'č': "c",
	'è': "e", 'é': "e", 'ê': "e", 'ë': "e", 'ì': "i", 'í': "i", 'î': "i", 'ï': "i", 'ı': "i",
	'ñ': "n", 'ò': "o", 'ó': "o", 'ô': "o", 'õ': "o", 'ö': "o", 'ø': "o", 'ù': "u", 'ú': "u",
	'û': "u", 'ü': "u", 'ý': "y", 'ÿ': "y", 'ß': "ss", 'ł': "l", 'ğ': "g", 'ř': "r", 'ş': "s",
}

// tokens splits s into its lower-case runs of letters and digits, accents folded: what
// any of the search rules, old or new, could index of it.
func tokens(s string) []string {
	return strings.FieldsFunc(foldAccents(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// reservedTokens is every token the fixed lists and the addresses can put into a message
// besides the vocabulary words.
func reservedTokens(addrs []address) map[string]bool {
	out := map[string]bool{}
	add := func(ss ...string) {
		for _, s := range ss {
			for _, t := range tokens(s) {
				out[t] = true
			}
		}
	}
	add(firstNames...)
	add(lastNames...)
	add(companies...)
	add(domainTails...)
	add(accentedWords...)
	add(attachmentWords...)
	add(greetings...)
	add(closings...)
	add(htmlWords, mimeWords, "re fwd message example wrote")
	for _, a := range addrs {
		add(a.addr, a.name)
	}
	return out
}
