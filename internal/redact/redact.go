// Package redact removes credentials from text before people or logs see
// it: the user information of URLs (kafka://user:pass@host, s3 or HTTP
// endpoints with keys in them), bare user:password@host forms, and the
// values of query parameters that carry secrets.
package redact

import "regexp"

// Mask replaces what was removed.
const Mask = "***"

var (
	// scheme://anything@ : the whole user information goes.
	urlUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://)[^/@\s"'?#]+@`)
	// user:password@ without a scheme, as in a broker list.
	// A password may hold commas: what precedes the @ back to the last
	// separator goes, even if that takes a broker name with it.
	bareUserinfo = regexp.MustCompile(`(^|[\s"'(\[,=/])[^\s"'@/,:()\[\]=]+:[^\s"'@/]*@`)
	// secret query parameters and key=value pairs.
	secretParam = regexp.MustCompile(`(?i)\b(password|passwd|pwd|secret|token|access_key|secret_key|secret_access_key|sasl_password|api_key|apikey|sig|signature|x-amz-signature|x-amz-credential|x-amz-security-token)=([^&\s"',;]+)`)
)

// String returns s with every credential it recognises replaced by Mask.
func String(s string) string {
	s = urlUserinfo.ReplaceAllString(s, "${1}"+Mask+"@")
	s = bareUserinfo.ReplaceAllString(s, "${1}"+Mask+"@")
	return secretParam.ReplaceAllString(s, "${1}="+Mask)
}
