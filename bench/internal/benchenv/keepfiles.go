package benchenv

import (
	"fmt"
	"io"
	"os"
)

// KeepFilesUsage is the help of -keep-files, the flag of the benchmarks that create many
// files (the import's message files, the store's).
//
// Why it exists: on an ext4 file system without a journal (this machine's), creating a
// file skips the inodes freed in the last minutes in the folder's block group (ext4's
// recently_deleted check, which perf shows), and after a few benchmark runs that each
// deleted thousands of files a create cost up to 0.8 ms of system CPU instead of 0.05. A
// benchmark that deletes its files at the end slows the next run's creates, and one that
// deletes a copy right before the timed part slows the timed part: the import's rates
// scattered by ±30 % between runs a minute apart. A series of runs with -keep-files
// deletes nothing until its end (docs/performance.md).
const KeepFilesUsage = "leave the run's files in -tmpdir and print where, instead of deleting them: on ext4 without a journal, files deleted in the last minutes slow every file created after them, so a series of runs should delete nothing until its end"

// RemoveWork deletes a run's work directory, or, with -keep-files (keep), leaves it and
// says where it is.
func RemoveWork(dir string, keep bool, out io.Writer) {
	if keep {
		fmt.Fprintf(out, "files kept in %s\n", dir)
		return
	}
	os.RemoveAll(dir)
}
