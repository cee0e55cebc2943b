"""The judge: one kernel's scoring from start to verdict, the scoring session, the reference service, the judge's own clock."""
