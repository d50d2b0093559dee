package s3store

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mailledger/mailledger/archive"
)

// listObjects calls fn with the key of every uploaded message under prefix: "" for all
// tenants, a tenant, or a deeper folder of archive.MessageKey's shape.
func (s *Store) listObjects(ctx context.Context, prefix string, fn func(key string) error) error {
	prefix = strings.TrimSuffix(prefix, "/")
	tenants, err := s.listTenants(ctx, prefix)
	if err != nil {
		return err
	}
	for _, tenant := range tenants {
		bucket, err := BucketName(s.cfg.BucketPrefix, tenant)
		if err != nil {
			return err
		}
		err = s.walkBucket(ctx, bucket, func(object string, _ int64) error {
			id, ok := s.objectID(object)
			if !ok {
				return nil // not a message file of ours
			}
			key := archive.MessageKey(tenant, id)
			if prefix != "" && !strings.HasPrefix(key, prefix+"/") {
				return nil
			}
			return fn(key)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// listTenants returns the tenant of prefix, or every tenant that has a bucket when
// prefix is empty.
func (s *Store) listTenants(ctx context.Context, prefix string) ([]string, error) {
	if prefix != "" {
		tenant, _, _ := strings.Cut(prefix, "/")
		return []string{tenant}, nil
	}
	buckets, err := s.listBuckets(ctx)
	if err != nil {
		return nil, err
	}
	tenants := make([]string, 0, len(buckets))
	for _, b := range buckets {
		tenants = append(tenants, strings.TrimPrefix(b, s.cfg.BucketPrefix))
	}
	return tenants, nil
}

// listBuckets returns the buckets whose names start with the bucket prefix.
func (s *Store) listBuckets(ctx context.Context) ([]string, error) {
	var names []string
	p := s3.NewListBucketsPaginator(s.client, &s3.ListBucketsInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("s3 list buckets: %w", err)
		}
		for _, b := range page.Buckets {
			name := aws.ToString(b.Name)
			if strings.HasPrefix(name, s.cfg.BucketPrefix) && len(name) > len(s.cfg.BucketPrefix) {
				names = append(names, name)
			}
		}
	}
	return names, nil
}

// walkBucket calls fn with the name and size of every object in bucket; a bucket that
// does not exist holds nothing.
func (s *Store) walkBucket(ctx context.Context, bucket string, fn func(object string, size int64) error) error {
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &bucket})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if isMissing(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("s3 list %s: %w", bucket, err)
		}
		for _, o := range page.Contents {
			if err := fn(aws.ToString(o.Key), aws.ToInt64(o.Size)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Ping says whether the object store answers (a list of the buckets).
func (s *Store) Ping(ctx context.Context) error {
	_, err := s.listBuckets(ctx)
	return err
}
