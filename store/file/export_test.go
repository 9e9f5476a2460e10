package file

import "time"

// AgeTaskCache makes the task list cache of s, which must not be in use
// yet, take its files as written d earlier than they were, so that a test
// need not wait racySlack before a listing may trust what it reads.
func AgeTaskCache(s *Store, d time.Duration) {
	s.taskCache.clock = func() time.Time { return time.Now().Add(d) }
}

// SetCachedTaskSubject gives task id its subject in the cache of list's
// last listing (taskCache), so that a test can tell a listing served from
// the cache from one that read the file. It reports whether the task was
// cached.
func SetCachedTaskSubject(s *Store, list, id, subject string) bool {
	tc := &s.taskCache
	tc.mu.Lock()
	defer tc.mu.Unlock()
	m := tc.lists[s.listDir(list)]
	c, ok := m[id+taskExt]
	if !ok {
		return false
	}
	c.task = c.task.Clone()
	c.task.Subject = subject
	m[id+taskExt] = c
	return true
}
