package secrets

// maskMinRunes is the shortest secret Mask shows any of: below it, seven
// revealed characters would be most of the secret.
const maskMinRunes = 12

// Mask returns a form of secret fit for showing on screen: "" for an empty
// secret, "••••••••" for one shorter than 12 characters, and otherwise the
// first 3 and last 4 characters around "…" (for example "sk-…wxyz"). It never
// reveals more than 7 characters, and works on runes so that it never splits
// a multi-byte character.
func Mask(secret string) string {
	if secret == "" {
		return ""
	}
	r := []rune(secret)
	if len(r) < maskMinRunes {
		return "••••••••"
	}
	return string(r[:3]) + "…" + string(r[len(r)-4:])
}
