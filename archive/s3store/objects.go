package s3store

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/mailledger/mailledger/archive"
)

// isMissing reports whether err says the object or its bucket does not exist.
func isMissing(err error) bool {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode() {
		case "NoSuchKey", "NoSuchBucket", "NotFound":
			return true
		}
	}
	var nsk *types.NoSuchKey
	var nsb *types.NoSuchBucket
	var nf *types.NotFound
	return errors.As(err, &nsk) || errors.As(err, &nsb) || errors.As(err, &nf)
}

func (s *Store) getObject(ctx context.Context, loc location) ([]byte, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &loc.bucket, Key: &loc.object})
	if isMissing(err) {
		return nil, fmt.Errorf("%w: %s/%s", archive.ErrBlobNotFound, loc.bucket, loc.object)
	}
	if err != nil {
		return nil, fmt.Errorf("s3 get %s/%s: %w", loc.bucket, loc.object, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, fmt.Errorf("s3 get %s/%s: %w", loc.bucket, loc.object, err)
	}
	return data, nil
}

func (s *Store) deleteObject(ctx context.Context, loc location) error {
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &loc.bucket, Key: &loc.object})
	if err != nil && !isMissing(err) {
		return fmt.Errorf("s3 delete %s/%s: %w", loc.bucket, loc.object, err)
	}
	return nil
}

// ensureBucket creates the tenant's bucket the first time this store uploads to it.
func (s *Store) ensureBucket(ctx context.Context, bucket string) error {
	if _, ok := s.buckets.Load(bucket); ok {
		return nil
	}
	_, err := s.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket})
	var owned *types.BucketAlreadyOwnedByYou
	var apiErr smithy.APIError
	if err != nil && !errors.As(err, &owned) &&
		!(errors.As(err, &apiErr) && apiErr.ErrorCode() == "BucketAlreadyOwnedByYou") {
		return fmt.Errorf("s3 create bucket %s: %w", bucket, err)
	}
	s.buckets.Store(bucket, struct{}{})
	return nil
}

// upload copies data to loc with its SHA-256 and MD5 (the store refuses a body that does
// not match them), then confirms it. A store that answers the upload with the SHA-256 it
// verified confirms it in that answer (the body of that checksum, of data's size, is what
// it stored); another is asked with HeadObject: the stored object must have data's size
// and either its SHA-256 or, as ETag, its MD5.
func (s *Store) upload(ctx context.Context, loc location, data []byte) error {
	if err := s.ensureBucket(ctx, loc.bucket); err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	md := md5.Sum(data)
	shaB64 := base64.StdEncoding.EncodeToString(sum[:])
	out, err := s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: &loc.bucket, Key: &loc.object, Body: bytes.NewReader(data),
		ContentLength:  aws.Int64(int64(len(data))),
		ContentMD5:     aws.String(base64.StdEncoding.EncodeToString(md[:])),
		ChecksumSHA256: aws.String(shaB64),
	})
	if err != nil {
		return fmt.Errorf("s3 put %s/%s: %w", loc.bucket, loc.object, err)
	}
	if aws.ToString(out.ChecksumSHA256) == shaB64 {
		return nil // confirmed by the answer: no second round trip
	}
	return s.confirm(ctx, loc, int64(len(data)), shaB64, hex.EncodeToString(md[:]))
}

// errUnconfirmed means the stored object is not the staged file.
var errUnconfirmed = errors.New("uploaded object does not match the staged file")

func (s *Store) confirm(ctx context.Context, loc location, size int64, shaB64, md5Hex string) error {
	head, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{
		Bucket: &loc.bucket, Key: &loc.object, ChecksumMode: types.ChecksumModeEnabled,
	})
	if err != nil {
		return fmt.Errorf("s3 head %s/%s: %w", loc.bucket, loc.object, err)
	}
	gotSize := aws.ToInt64(head.ContentLength)
	etag := strings.Trim(aws.ToString(head.ETag), `"`)
	if gotSize != size || (aws.ToString(head.ChecksumSHA256) != shaB64 && etag != md5Hex) {
		return fmt.Errorf("%w: %s/%s: size %d, etag %q; want size %d, md5 %s",
			errUnconfirmed, loc.bucket, loc.object, gotSize, etag, size, md5Hex)
	}
	return nil
}
