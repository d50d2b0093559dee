package s3store

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/mailledger/mailledger/archive"
)

// prefixLabel is one label of a bucket prefix: lower-case letters and digits only (the
// spec forbids a dash; bucket names have no capitals).
var prefixLabel = regexp.MustCompile(`^[a-z0-9]{1,63}$`)

// maxPrefix leaves room in a bucket name (at most 63 characters) for a tenant's name.
const maxPrefix = 60

// ValidBucketPrefix checks s3_bucket_prefix: empty, or labels of lower-case letters and
// digits separated by single dots (domain-name rules without the dash), optionally
// ending with a dot, at most 60 characters. Some providers accept no dot in a bucket
// name at all: a prefix without dots is the portable choice.
func ValidBucketPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if len(prefix) > maxPrefix {
		return fmt.Errorf("%q is longer than %d characters", prefix, maxPrefix)
	}
	if strings.Contains(prefix, "-") {
		return fmt.Errorf("%q must not contain a dash", prefix)
	}
	for _, label := range strings.Split(strings.TrimSuffix(prefix, "."), ".") {
		if !prefixLabel.MatchString(label) {
			return fmt.Errorf("%q is not a domain name of lower-case letters and digits (label %q)", prefix, label)
		}
	}
	return nil
}

// bucketName is S3's rule for a bucket's name: 3 to 63 characters of lower-case letters,
// digits, dots and dashes, starting and ending with a letter or digit.
var bucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// ipLike is a bucket name S3 refuses because it looks like an IPv4 address.
var ipLike = regexp.MustCompile(`^\d+\.\d+\.\d+\.\d+$`)

// BucketName returns the bucket of tenant: the prefix followed by the tenant's name. A
// tenant whose name cannot be a bucket's (capitals, underscores, too long …) is
// archive.ErrBadKey.
func BucketName(prefix, tenant string) (string, error) {
	b := prefix + tenant
	if !bucketName.MatchString(b) || strings.Contains(b, "..") || strings.Contains(b, ".-") ||
		strings.Contains(b, "-.") || ipLike.MatchString(b) || strings.HasPrefix(b, "xn--") {
		return "", fmt.Errorf("%w: tenant %q gives no valid bucket name (%q)", archive.ErrBadKey, tenant, b)
	}
	return b, nil
}

// location is where one message file lives in the store.
type location struct {
	tenant string
	id     int64
	bucket string
	object string
}

// errNotMessageKey means a key is not of archive.MessageKey's shape.
var errNotMessageKey = errors.New("not a message key")

// locate maps a key of archive.MessageKey's shape (<tenant>/<xx>/<yy>/<id>.m) to its
// bucket and object. Nothing is built from the key itself: the id is parsed as a number,
// the key rebuilt by MessageKey must equal the one given, and the object's name is made
// from the number alone.
func (s *Store) locate(key string) (location, error) {
	tenant, _, _ := strings.Cut(key, "/")
	base := key[strings.LastIndexByte(key, '/')+1:]
	id, err := strconv.ParseInt(strings.TrimSuffix(base, ".m"), 10, 64)
	if err != nil || id < 0 || tenant == "" || archive.MessageKey(tenant, id) != key {
		return location{}, fmt.Errorf("%w: %q: %w", archive.ErrBadKey, key, errNotMessageKey)
	}
	bucket, err := BucketName(s.cfg.BucketPrefix, tenant)
	if err != nil {
		return location{}, err
	}
	return location{tenant: tenant, id: id, bucket: bucket, object: s.objectName(id)}, nil
}

// objectName is the object of message id in its tenant's bucket: "<id>.m", or with
// s3_use_subdirs "<hh>/<id>.m", hh the id's lowest byte in hex (00..ff).
func (s *Store) objectName(id int64) string {
	if s.cfg.UseSubdirs {
		return fmt.Sprintf("%02x/%d.m", id&0xff, id)
	}
	return fmt.Sprintf("%d.m", id)
}

// objectID reads the id back from an object's name as objectName made it; false for
// any other object.
func (s *Store) objectID(object string) (int64, bool) {
	base := object
	if s.cfg.UseSubdirs {
		dir, rest, ok := strings.Cut(object, "/")
		if !ok || len(dir) != 2 {
			return 0, false
		}
		base = rest
	}
	id, err := strconv.ParseInt(strings.TrimSuffix(base, ".m"), 10, 64)
	if err != nil || id < 0 || s.objectName(id) != object {
		return 0, false
	}
	return id, true
}
