package main

// The mutants of issue 35 items 1, 6 and 9 (the CLI's human output): the
// CLI proves the server before it sends a credential it found, files are
// written where no one else's link can send them, and the CLI shows what a
// value holds.
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "credproof/token-without-proof",
			Why:      "the CLI sends the operator token it found in the registry on any connection: a listener on a dead serve's port gets it",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "if proven != nil {", Replace: "if false {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCLIProvesTheServerBeforeTheToken", "TestCLIProvesTheServerToAnotherUser"},
		},
		{
			Name:     "credproof/proof-not-checked",
			Why:      "the CLI takes any answer to its challenge as the proof",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "if !hmac.Equal([]byte(got), []byte(proofOf(key, challenge))) {", Replace: "if len(got) < 0 {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCLIProvesTheServerBeforeTheToken"},
		},
		{
			Name:     "credproof/entry-without-key",
			Why:      "an entry without a proof key (an older serve's) hands its token to the first connection",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "return \"\", nil, fmt.Errorf(\"the entry registered for %s cannot be proved (%v): restart that serve\", base, err)", Replace: "tok, _ := readSecretFile(e.TokenFile); return tok, nil, nil"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCLIProvesTheServerBeforeTheToken"},
		},
		{
			Name:     "cmd/procgraph/html-escaped-values",
			Why:      "the CLI's human output shows <, > and & as JSON's HTML escapes, which the display escape turns into \\u005cu003c",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "enc.SetEscapeHTML(false)\n\tif err := enc.Encode(v); err != nil {", Replace: "if err := enc.Encode(v); err != nil {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCLIShowsMarkupAsItIs"},
		},
		{
			Name: "compact/temp-follows-planted-link",
			Why:  "compact writes its copy at the predictable .NAME.compact, following a link another user planted there",
			Edits: []Edit{{Dir: "graph/embedded", Find: `f, made, err := privfile.Create(filepath.Dir(path), "."+filepath.Base(path)+".compact-*", info.Mode().Perm())`,
				Replace: `f, err := os.OpenFile(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".compact"), os.O_RDWR|os.O_CREATE, info.Mode().Perm()); var made os.FileInfo; if err == nil { made, err = f.Stat() }`}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCompactIgnoresAPlantedLink"},
		},
		{
			Name:     "privfile/create-not-exclusive",
			Why:      "a private temporary file is opened with O_CREATE but without O_EXCL at a predictable name, through whatever link is there",
			Edits:    []Edit{{Dir: "internal/privfile", Find: "f, err := os.CreateTemp(dir, pattern)", Replace: `f, err := os.OpenFile(filepath.Join(dir, func() string { if n := len(pattern) - 2; n >= 0 && pattern[n:] == "-*" { return pattern[:n] }; return pattern }()), os.O_RDWR|os.O_CREATE, 0o600)`}},
			Packages: []string{"./internal/privfile"},
			Tests:    []string{"TestCreateNeverOpensWhatExists"},
		},
		{
			Name:     "privfile/open-follows-link",
			Why:      "bbolt reopens the private file through a link",
			Edits:    []Edit{{Dir: "internal/privfile", Find: "(flag&^os.O_CREATE)|syscall.O_NOFOLLOW", Replace: "flag|0*syscall.O_NOFOLLOW"}},
			Packages: []string{"./internal/privfile"},
			Tests:    []string{"TestCreateNeverOpensWhatExists"},
		},
		{
			Name:     "privfile/rename-unchecked",
			Why:      "a temporary file replaced while it was written (a link, another file) is renamed into place",
			Edits:    []Edit{{Dir: "internal/privfile", Find: "if err := Same(tmp, made); err != nil {", Replace: "if err := Same(tmp, made); err != nil && false {"}},
			Packages: []string{"./internal/privfile"},
			Tests:    []string{"TestRenameChecksTheFileWritten"},
		},
		{
			Name:     "credfile/follows-link",
			Why:      "the CLI reads the operator credential file through a link (to a file another user chose)",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK", Replace: "os.O_RDONLY|syscall.O_NONBLOCK"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCLIProvesTheServerBeforeTheToken"},
		},
		{
			Name:     "credfile/any-owner",
			Why:      "the CLI uses a credential file another user owns (root runs the test; skipped otherwise)",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "ok && int(sys.Uid) != os.Getuid() {", Replace: "ok && false {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCLIProvesTheServerBeforeTheToken"},
		},
	}...)
}
