// Package redact removes credentials from text before people or logs see
// it: the user information of URLs (kafka://user:pass@host, s3 or HTTP
// endpoints with keys in them), bare user:password@host forms, and the
// values of query parameters that carry secrets.
package redact

import "regexp"

// Mask replaces what was removed.
const Mask = "***"

var (
	// scheme://anything@ : the whole user information goes, up to the
	// last @ of the URL: a password may hold an @ or a / that its writer
	// did not percent-encode, and then the first @ or / is inside it.
	// A path with an @ in it loses its start too: more hidden than
	// needed, never less.
	urlUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://)[^\s"'?#]*@`)
	// user:password@ without a scheme, as in a broker list.
	// A password may hold commas: what precedes the @ back to the last
	// separator goes, even if that takes a broker name with it.
	bareUserinfo = regexp.MustCompile(`(^|[\s"'(\[,=/])[^\s"'@/,:()\[\]=]+:[^\s"'@/]*@`)
	// secret query parameters and key=value pairs (key:value too: a
	// property written with the wrong separator is echoed in the error
	// that says so), in snake or kebab case (s3.secret-access-key, the
	// REST catalog's credential).
	secretParam = regexp.MustCompile(`(?i)\b(password|passwd|pwd|secret|token|credential|access[_-]key|secret[_-]key|secret[_-]access[_-]key|session[_-]token|access[_-]token|client[_-]secret|private[_-]key|sasl[_-]password|api[_-]key|apikey|sig|signature|x-amz-signature|x-amz-credential|x-amz-security-token)([=:])([^&\s"',;]+)`)
)

// String returns s with every credential it recognises replaced by Mask.
func String(s string) string {
	s = urlUserinfo.ReplaceAllString(s, "${1}"+Mask+"@")
	s = bareUserinfo.ReplaceAllString(s, "${1}"+Mask+"@")
	return secretParam.ReplaceAllString(s, "${1}${2}"+Mask)
}
