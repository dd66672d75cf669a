"""A lake location (a data file, a folder; a URI or a plain path) as a file system and a path in it.

Locations are taken literally, never percent-decoded. The catalog records the warehouse as
``file://`` + the folder as written (``file:///tmp/x/my lake é%41``), PyIceberg and Spark
record data files as the names they wrote (Spark escapes a partition value ``%41`` as the
folder ``s=%2541``), and PyIceberg's own file IO reads them literally. ``FileSystem.from_uri``
instead refuses a space or a non-ASCII character ("Cannot parse URI") and decodes ``%XX``,
opening (or deleting) a file that does not exist. Every lake module opens, lists, moves and
deletes through :func:`filesystem_of`, so there is one reading of a location.
"""

from __future__ import annotations

import pyarrow.fs as pafs


def filesystem_of(location: str) -> tuple[pafs.FileSystem, str]:
    """The file system holding ``location`` and its path there, taken literally.

    ``file:///a/b`` and Hadoop's ``file:/a/b`` are the local ``/a/b``; a location without a
    scheme is a local path; any other URI (``s3://bucket/key``) gets the file system pyarrow
    makes of its scheme and authority, and the rest of it as the path.
    """
    if location.startswith("file:"):
        return pafs.LocalFileSystem(), "/" + location[len("file:") :].lstrip("/")
    if "://" not in location:
        return pafs.LocalFileSystem(), location
    scheme, rest = location.split("://", 1)
    authority = rest.partition("/")[0]
    filesystem, _ = pafs.FileSystem.from_uri(f"{scheme}://{authority}/")
    return filesystem, rest
