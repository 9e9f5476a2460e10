package permission

import "strings"

// writtenArgs returns the literal arguments of command words that the
// command visibly writes (creates, changes, removes): every file of tee,
// touch, rm, chmod, ...; the destination of cp, mv, install, ln, rsync
// and scp; the files of sed -i; of= of dd; the config file of a git
// config that sets something. It over-approximates (a chmod mode is
// taken for a file too): the result only feeds deny and ask rules and the
// protected paths, which then ask.
func writtenArgs(c Command) []Word {
	if len(c.Args) == 0 || !c.Args[0].Literal {
		return nil
	}
	name := cleanBase(c.Args[0].Value)
	args := c.Args[1:]
	var files []Word // non-option arguments
	for _, a := range args {
		if !strings.HasPrefix(a.Value, "-") || a.Value == "-" {
			files = append(files, a)
		}
	}
	switch name {
	case "tee", "touch", "truncate", "rm", "rmdir", "unlink", "mkdir", "chmod", "chown", "chgrp", "shred", "mkfifo", "mknod":
		return files
	case "cp", "mv", "install", "ln", "rsync", "scp":
		for i, a := range args {
			if (a.Value == "-t" || a.Value == "--target-directory") && i+1 < len(args) {
				return []Word{args[i+1]}
			}
			if v, ok := strings.CutPrefix(a.Value, "--target-directory="); ok {
				return []Word{{Value: v, Literal: a.Literal}}
			}
		}
		if len(files) > 0 {
			return files[len(files)-1:]
		}
	case "sed", "gsed":
		inPlace, script := false, false
		for _, a := range args {
			v := a.Value
			switch {
			case v == "--in-place" || strings.HasPrefix(v, "--in-place="):
				inPlace = true
			case v == "-e" || v == "-f" || strings.HasPrefix(v, "--expression") || strings.HasPrefix(v, "--file"):
				script = true
			case strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.Contains(v, "i"):
				inPlace = true
			}
		}
		if !inPlace {
			return nil
		}
		if !script && len(files) > 0 {
			return files[1:] // the first operand is the script
		}
		return files
	case "dd":
		for _, a := range args {
			if v, ok := strings.CutPrefix(a.Value, "of="); ok {
				return []Word{{Value: v, Literal: a.Literal}}
			}
		}
	case "git":
		return gitConfigWrites(args)
	}
	return nil
}

// gitConfigWrites returns the file a git config command writes: the
// repository's .git/config, ~/.gitconfig with --global, the --file.
func gitConfigWrites(args []Word) []Word {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i].Value, "-") {
		if v := args[i].Value; (v == "-C" || v == "-c" || v == "--git-dir" || v == "--work-tree") && i+1 < len(args) {
			i++
		}
		i++
	}
	if i >= len(args) || args[i].Value != "config" {
		return nil
	}
	rest := args[i+1:]
	file := Word{Value: ".git/config", Literal: true}
	var operands int
	write := false
	for j := 0; j < len(rest); j++ {
		v := rest[j].Value
		switch {
		case v == "--global":
			file = Word{Value: "~/.gitconfig", Literal: true}
		case (v == "--file" || v == "-f") && j+1 < len(rest):
			file = rest[j+1]
			j++
		case strings.HasPrefix(v, "--file="):
			file = Word{Value: strings.TrimPrefix(v, "--file="), Literal: rest[j].Literal}
		case contains([]string{"--add", "--unset", "--unset-all", "--replace-all", "--rename-section", "--remove-section", "--edit", "-e"}, v):
			write = true
		case contains([]string{"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "--get-color", "--get-colorbool"}, v):
			return nil
		case !strings.HasPrefix(v, "-"):
			if operands == 0 && contains([]string{"set", "unset", "edit", "rename-section", "remove-section"}, v) {
				write = true
			}
			if operands == 0 && contains([]string{"get", "list"}, v) {
				return nil
			}
			operands++
		}
	}
	if write || operands >= 2 {
		return []Word{file}
	}
	return nil
}
