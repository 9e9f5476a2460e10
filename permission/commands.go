package permission

// operands says what a read-only command's operands are.
type operands uint8

const (
	argFiles   operands = iota // files it reads (or lists)
	argText                    // text, names or numbers; never files
	argPattern                 // a pattern first (unless -e or -f gave one), then files
	argRaw                     // text, and the command takes no options at all (echo, test)
)

// command is what the built-in read-only list knows of one command: every
// option it may be given and what its operands are. Anything not written
// here makes the command ask.
type command struct {
	opts options
	args operands
	nums bool // -NUM is an option (head -5)
	// scan lists the options that make it read whole folders (grep -r);
	// scanAlways says it always does (rg).
	scan       []string
	scanAlways bool
	// maxFiles, when above zero, is the number of operands past which an
	// operand is an output file (uniq IN OUT, xxd IN OUT).
	maxFiles int
}

var (
	grepOpts = opts(`-E -F -G -P -e= -f@ -i -y -v -w -x -c -L -l -m= -o -q -s -b -H -h -n -T -Z -z -A= -B= -C= -a -I -d= -D= -r -R -U
		--extended-regexp --fixed-strings --basic-regexp --perl-regexp --regexp= --file@ --ignore-case --no-ignore-case
		--invert-match --word-regexp --line-regexp --count --files-with-matches --files-without-match --max-count=
		--only-matching --quiet --silent --no-messages --byte-offset --with-filename --no-filename --label= --line-number
		--initial-tab --null --null-data --after-context= --before-context= --context= --text --binary-files= --devices=
		--directories= --recursive --dereference-recursive --include= --exclude= --exclude-from@ --exclude-dir=
		--line-buffered --binary --color? --colour? --help --version`)
	sumOpts = opts(`-b -t -z -w --binary --text --zero --tag --untagged --quiet --status --strict --warn --ignore-missing
		-c! --check! --help --version`)
)

// commands is the built-in read-only list.
var commands = map[string]command{
	"ls": {opts: opts(`-a -A -b -B -c -C -d -D -f -F -g -G -h -H -i -k -l -L -m -n -N -o -p -q -Q -r -R -s -S -t -u -U -v
		-x -X -Z -1 -I= -T= -w= --all --almost-all --author --escape --block-size= --ignore-backups --color? --colour?
		--directory --dired --classify? --file-type --format= --full-time --group-directories-first --no-group
		--human-readable --si --dereference-command-line --dereference-command-line-symlink-to-dir --hide= --hyperlink?
		--indicator-style= --inode --ignore= --kibibytes --literal --dereference --numeric-uid-gid --hide-control-chars
		--show-control-chars --quote-name --quoting-style= --reverse --recursive --size --sort= --time= --time-style=
		--tabsize= --width= --context --zero --help --version`)},
	"cat": {opts: opts(`-A -b -e -E -n -s -t -T -u -v --show-all --number-nonblank --show-ends --number --squeeze-blank
		--show-tabs --show-nonprinting --help --version`)},
	"head": {nums: true, opts: opts(`-c= -n= -q -v -z --bytes= --lines= --quiet --silent --verbose --zero-terminated
		--help --version`)},
	"tail": {nums: true, opts: opts(`-c= -n= -f -F -q -v -z -s= --bytes= --lines= --follow? --retry --pid=
		--max-unchanged-stats= --sleep-interval= --quiet --silent --verbose --zero-terminated --help --version`)},
	"wc": {opts: opts(`-c -m -l -L -w --bytes --chars --lines --max-line-length --words --total= --files0-from!
		--help --version`)},
	"grep":  {args: argPattern, nums: true, opts: grepOpts, scan: []string{"-r", "-R", "--recursive", "--dereference-recursive"}},
	"egrep": {args: argPattern, nums: true, opts: grepOpts, scan: []string{"-r", "-R", "--recursive", "--dereference-recursive"}},
	"fgrep": {args: argPattern, nums: true, opts: grepOpts, scan: []string{"-r", "-R", "--recursive", "--dereference-recursive"}},
	"rg": {args: argPattern, scanAlways: true, opts: opts(`-e= -f@ -A= -B= -C= -m= -d= -g= -t= -T= -r= -j= -M= -E= -i -s
		-S -v -w -x -F -l -c -n -N -H -I -o -p -q -u -L -a -b -U -P -0 -. -h -V
		--regexp= --file@ --after-context= --before-context= --context= --max-count= --max-depth= --maxdepth= --glob= --iglob=
		--type= --type-not= --type-add= --type-clear= --replace= --threads= --max-columns= --encoding= --max-filesize=
		--sort= --sortr= --color= --colors= --path-separator= --field-match-separator= --field-context-separator=
		--context-separator= --dfa-size-limit= --regex-size-limit= --engine= --ignore-file@ --hyperlink-format=
		--ignore-case --case-sensitive --smart-case --invert-match --word-regexp --line-regexp --fixed-strings
		--files-with-matches --files-without-match --count --count-matches --line-number --no-line-number
		--with-filename --no-filename --no-ignore --no-ignore-vcs --no-ignore-dot --no-ignore-parent --no-ignore-global
		--no-ignore-exclude --no-ignore-files --no-ignore-messages --no-require-git --only-matching --pretty --quiet
		--unrestricted --follow --no-follow --text --no-text --binary --no-binary --multiline --multiline-dotall --pcre2
		--no-pcre2 --null --null-data --hidden --no-hidden --files --type-list --json --vimgrep --heading --no-heading
		--column --no-column --byte-offset --trim --passthru --passthrough --stats --no-messages --one-file-system
		--sort-files --glob-case-insensitive --ignore-file-case-insensitive --no-unicode --crlf --no-crlf --mmap
		--no-mmap --line-buffered --block-buffered --include-zero --no-config --debug --trace --max-columns-preview
		--auto-hybrid-regex --no-auto-hybrid-regex --invert-match --help --version
		--pre! --pre-glob! -z! --search-zip! --hostname-bin!`)},
	"file": {opts: opts(`-b -c -E -h -i -k -L -N -n -r -s -S -z -Z -0 -v -e= -F= -P= -m@ --magic-file@ --mime --mime-type
		--mime-encoding --brief --dereference --no-dereference --keep-going --no-buffer --no-pad --raw --special-files
		--uncompress --uncompress-noreport --exclude= --extension --apple --separator= --print0 --parameter= --help
		--version -f! --files-from! -C! --compile! -p! --preserve-date!`)},
	"stat": {opts: opts(`-L -f -t -c= --printf= --format= --dereference --file-system --terse --cached= --help --version`)},
	"du": {opts: opts(`-0 -a -b -c -D -h -H -k -l -L -m -P -s -S -x -d= -t= -B= -X@ --null --all --apparent-size
		--block-size= --bytes --total --dereference-args --human-readable --inodes --count-links --dereference
		--max-depth= --no-dereference --separate-dirs --si --summarize --threshold= --time? --time-style= --exclude=
		--exclude-from@ --one-file-system --help --version --files0-from!`)},
	"df": {opts: opts(`-a -h -H -i -k -l -P -T -t= -x= -B= --all --block-size= --human-readable --si --inodes --local
		--no-sync --output? --portability --print-type --total --type= --exclude-type= --help --version`)},
	"tree": {opts: opts(`-a -d -l -f -x -i -s -h -u -g -D -F -q -N -Q -p -v -t -c -U -r -C -n -J -X -S -A -L= -P= -I=
		-H= -T= --du --si --prune --noreport --dirsfirst --filesfirst --charset= --filelimit= --timefmt= --sort=
		--gitignore --gitfile@ --matchdirs --metafirst --info --infofile@ --inodes --device --ignore-case --nolinks
		--help --version -o! -R! --fromfile! --fromtabfile! --hintro! --houtro!`)},
	"diff": {scanAlways: true, opts: opts(`-a -b -B -d -e -E -i -n -N -p -q -r -s -t -T -u -w -y -Z -c -l! -C= -U= -W= -x= -X@
		-I= -F= -D= -S= --normal --brief --report-identical-files --context? --unified? --ed --rcs --side-by-side
		--width= --left-column --suppress-common-lines --show-c-function --show-function-line= --label= --expand-tabs
		--initial-tab --tabsize= --suppress-blank-empty --paginate! --new-file --unidirectional-new-file --ignore-case
		--ignore-file-name-case --no-ignore-file-name-case --ignore-tab-expansion --ignore-trailing-space
		--ignore-space-change --ignore-all-space --ignore-blank-lines --ignore-matching-lines= --strip-trailing-cr
		--text --recursive --no-dereference --exclude= --exclude-from@ --starting-file= --from-file@ --to-file@
		--minimal --horizon-lines= --speed-large-files --color? --palette= --line-format= --old-line-format=
		--new-line-format= --unchanged-line-format= --old-group-format= --new-group-format= --changed-group-format=
		--unchanged-group-format= --ifdef= --help --version`)},
	"cmp": {opts: opts(`-b -l -s -i= -n= --print-bytes --verbose --quiet --silent --ignore-initial= --bytes= --help --version`)},
	"sort": {opts: opts(`-b -d -f -g -h -i -M -n -R -r -V -c -C -m -s -u -z -k= -t= -S= --ignore-leading-blanks
		--dictionary-order --ignore-case --general-numeric-sort --human-numeric-sort --ignore-nonprinting --month-sort
		--numeric-sort --random-sort --reverse --version-sort --sort= --check? --merge --stable --unique
		--zero-terminated --key= --field-separator= --buffer-size= --parallel= --batch-size= --debug --random-source@
		--help --version -o! --output! -T! --temporary-directory! --compress-program! --files0-from!`)},
	"uniq": {maxFiles: 1, opts: opts(`-c -d -D -i -u -z -f= -s= -w= --count --repeated --all-repeated? --skip-fields=
		--ignore-case --skip-chars= --unique --zero-terminated --check-chars= --group? --help --version`)},
	"nl": {opts: opts(`-p -b= -d= -f= -h= -i= -l= -n= -s= -v= -w= --body-numbering= --section-delimiter=
		--footer-numbering= --header-numbering= --line-increment= --join-blank-lines= --number-format= --no-renumber
		--number-separator= --starting-line-number= --number-width= --help --version`)},
	"cut": {opts: opts(`-n -s -z -b= -c= -d= -f= --bytes= --characters= --delimiter= --fields= --complement
		--only-delimited --output-delimiter= --zero-terminated --help --version`)},
	"od": {opts: opts(`-a -b -c -d -f -i -l -o -s -x -v -A= -j= -N= -S= -t= -w? --address-radix= --endian= --skip-bytes=
		--read-bytes= --strings? --format= --output-duplicates --width? --traditional --help --version`)},
	"hexdump": {opts: opts(`-b -c -C -d -o -x -v -e= -f@ -n= -s= -L? --help --version`)},
	"xxd": {maxFiles: 1, opts: opts(`-a -b -C -E -e -i -p -r -u -d -h -v -c= -g= -l= -o= -s= -n= -R=
		-autoskip -bits -capitalize -EBCDIC -include -ps -postscript -plain -revert -help -version
		-cols= -groupsize= -len= -offset= -seek= -name=`)},
	"md5sum":    {opts: sumOpts},
	"sha1sum":   {opts: sumOpts},
	"sha256sum": {opts: sumOpts},
	"sha512sum": {opts: sumOpts},
	"jq": {args: argPattern, opts: opts(`-n -r -j -a -s -c -C -M -S -e -R -h -V -f --from-file --tab --indent= --seq
		--stream --stream-errors --arg& --argjson& --slurpfile&@ --rawfile&@ --args --jsonargs --null-input
		--raw-input --slurp --compact-output --raw-output --raw-output0 --join-output --ascii-output --sort-keys
		--color-output --monochrome-output --exit-status --unbuffered --help --version -L! --library-path!`)},
	"column": {opts: opts(`-t -x -n -e -J -L -d -h -V -s= -o= -c= -N= -R= -H= -l= -r= -E= -W= -T= -O= -i= -p=
		--table --separator= --output-separator= --output-width= --fillrows --json --table-columns= --table-name=
		--table-right= --table-truncate= --table-wrap= --table-hide= --table-noheadings --table-order=
		--keep-empty-lines --help --version`)},
	"comm": {opts: opts(`-1 -2 -3 -z --check-order --nocheck-order --output-delimiter= --total --zero-terminated
		--help --version`)},
	"paste": {opts: opts(`-s -z -d= --delimiters= --serial --zero-terminated --help --version`)},
	"fold":  {nums: true, opts: opts(`-b -s -w= --bytes --spaces --width= --help --version`)},
	"rev":   {opts: opts(`-0 -h -V --zero --help --version`)},
	"tac":   {opts: opts(`-b -r -s= --before --regex --separator= --help --version`)},
	"strings": {nums: true, opts: opts(`-a -d -f -o -w -s= -n= -t= -e= -T= -U= --all --data --print-file-name --bytes=
		--radix= --encoding= --include-all-whitespace --output-separator= --target= --unicode= --help --version`)},
	"realpath": {opts: opts(`-e -m -L -P -q -s -z --canonicalize-existing --canonicalize-missing --logical --physical
		--quiet --strip --no-symlinks --zero --relative-to@ --relative-base@ --help --version`)},
	"readlink": {opts: opts(`-f -e -m -n -q -s -v -z --canonicalize --canonicalize-existing --canonicalize-missing
		--no-newline --quiet --silent --verbose --zero --help --version`)},
	"basename": {args: argText, opts: opts(`-a -z -s= --multiple --suffix= --zero --help --version`)},
	"dirname":  {args: argText, opts: opts(`-z --zero --help --version`)},
	"pwd":      {args: argText, opts: opts(`-L -P`)},
	"echo":     {args: argRaw},
	"printf":   {args: argRaw},
	"true":     {args: argRaw},
	"false":    {args: argRaw},
	"test":     {args: argRaw},
	"[":        {args: argRaw},
	"which":    {args: argText, opts: opts(`-a -s`)},
	"whoami":   {args: argText, opts: opts(`--help --version`)},
	"id": {args: argText, opts: opts(`-a -Z -g -G -n -r -u -z --context --group --groups --name --real --user --zero
		--help --version`)},
	"uname": {args: argText, opts: opts(`-a -s -n -r -v -m -p -i -o --all --kernel-name --nodename --kernel-release
		--kernel-version --machine --processor --hardware-platform --operating-system --help --version`)},
	"printenv": {args: argText, opts: opts(`-0 --null --help --version`)},
	"seq":      {args: argText, nums: true, opts: opts(`-w -f= -s= --format= --separator= --equal-width --help --version`)},
	"tr": {args: argText, opts: opts(`-c -C -d -s -t --complement --delete --squeeze-repeats --truncate-set1 --help
		--version`)},
	"date": {args: argText, opts: opts(`-u -R -d= -f@ -r@ -I? --date= --file@ --reference@ --iso-8601? --rfc-email
		--rfc-3339= --utc --universal --debug --resolution --help --version -s! --set!`)},
}
