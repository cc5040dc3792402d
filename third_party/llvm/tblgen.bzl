"""A thin macro around mlir-tblgen for the ODS files of this repository."""

def tessera_tblgen(name, td_file, td_srcs, outs):
    """Runs mlir-tblgen once per (flags, output) pair.

    Args:
      name: a filegroup collecting every output.
      td_file: the top-level .td file.
      td_srcs: .td files it includes from this repository.
      outs: a list of (flags, output file) pairs.
    """
    # Includes such as "ir/TileBase.td" are relative to this repository's
    # root, which is `external/<name>` in the execution root when another
    # workspace embeds it.
    root = Label("//:BUILD").workspace_root or "."
    gens = []
    for i, (flags, out) in enumerate(outs):
        gen = "%s_%d" % (name, i)
        native.genrule(
            name = gen,
            srcs = [td_file] + td_srcs + ["@llvm//:td_files"],
            outs = [out],
            tools = ["@llvm//:bin/mlir-tblgen"],
            cmd = ("$(location @llvm//:bin/mlir-tblgen) %s -I /usr/lib/llvm-22/include " +
                   "-I %s -I $(GENDIR)/%s $(location %s) -o $@") % (flags, root, root, td_file),
        )
        gens.append(gen)
    native.filegroup(name = name, srcs = [":" + g for g in gens])
