// index.glsl — shared indexing helpers.

// Workgroups are launched as a 2-D grid when a 1-D count exceeds maxComputeWorkGroupCount[0]
// (vk_grid in cmd.c); this is the linear workgroup index.
uint linear_group_id()
{
    return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
}

// Row r of an op's iteration space = (i1, i2, i3) with r = i1 + ne1*(i2 + ne2*i3); returns the
// element offset base + i1*s1 + i2*s2 + i3*s3 (mod 2^32, see push.glsl).
uint row_offset(uint r, uint ne1, uint ne2, uint base, uint s1, uint s2, uint s3)
{
    uint i1 = r % ne1;
    uint t = r / ne1;
    return base + i1 * s1 + (t % ne2) * s2 + (t / ne2) * s3;
}
