//go:build !linux

package archive

// perFileSync: without syncfs(2), every file of a batch is fsynced as it is written and
// syncAll syncs the folders their renames changed.
const perFileSync = true

// syncAll syncs the batch's folders, which makes the renames into them durable.
func syncAll(_ string, dirs map[string]bool) error {
	for dir := range dirs {
		if err := syncDir(dir); err != nil {
			return err
		}
	}
	return nil
}
