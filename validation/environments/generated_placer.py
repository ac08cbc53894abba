"""Places into a checkout the installed project's files it lacks that a commit does not track.

Run by the environment's interpreter (any Python from 3.6 on, standard library only) in a
checkout that is a git repository holding that commit, beside ``installed_files.py`` (see
``generated.GENERATED_PLACER``): ``python _swt_generated_placer.py COMMIT`` does in an image's
build what a run's start does through ``validation/runs/generated.py``: the files of
``installed_files.missing`` (the installed project's files the checkout lacks; a distribution
with no PEP 610 record is the project's when it was installed from the tree of ``COMMIT``)
that the tree of ``COMMIT`` (the environment commit, the one the project was installed from)
does not track are generated (setuptools-scm's ``_version.py``, compiled extensions) and are
copied there; one it tracks is source and is left out. Each placed path is said on stdout.
"""

import os
import shutil
import subprocess
import sys

try:  # this folder's copy of validation/environments/installed_files.py, in an image
    import _swt_installed_files as installed_files
except ImportError:  # the toolkit's own module, in the builder's process
    from validation.environments import installed_files


def tracked(commit, checkout="."):
    """Every path the tree of ``commit`` tracks → its object id, in the repository of
    ``checkout``."""
    listing = subprocess.check_output(
        ["git", "--literal-pathspecs", "ls-tree", "-r", "-z", commit], cwd=checkout
    )
    return installed_files.tree(listing.decode("utf-8", "surrogateescape"))


def place(commit, checkout="."):
    """Copy the generated files into ``checkout``; the paths placed, sorted."""
    known = tracked(commit, checkout)
    placed = []
    for source, target in installed_files.missing(checkout, known):
        if target in known:
            continue
        destination = os.path.join(checkout, target)
        folder = os.path.dirname(destination)
        if folder:
            os.makedirs(folder, exist_ok=True)
        shutil.copyfile(source, destination)
        placed.append(target)
    return sorted(placed)


def main(argv):
    for path in place(argv[0]):
        sys.stdout.write("placed (generated, not in the environment commit): " + path + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
